package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// Pause/Resume backpressure, many cycles, with the real fetcher against a
// real broker. One stream reads two partitions. Each cycle the reader
// pauses partition 0, and 20 new messages of partition 1 must come out
// while nothing of partition 0 does; then it resumes partition 0, lets the
// fetcher fill the queue (a slow reader), takes 5 of its messages and
// pauses it again. What the consumer holds of partition 0 (fetched, not
// yet consumed) must stay within what the stream may hold: its queue and
// the chunk being read (queued.max.message.chunks + 1, the README's memory
// bound). Before a paused partition's chunks were dropped, the iterator
// set the queued ones aside at every pause and each Resume let the
// fetcher queue as many again: the held messages grew by about two chunks
// a cycle. In the end every message has come out exactly once, in order.
// With recycled messages too: the dropped chunks give their memory back.
func TestIntegrationPauseResumeCyclesStayBounded(t *testing.T) {
	t.Parallel()
	for _, recycle := range []bool{false, true} {
		t.Run(fmt.Sprintf("recycle=%v", recycle), func(t *testing.T) {
			t.Parallel()
			testIntegrationPauseResumeCycles(t, recycle)
		})
	}
}

func testIntegrationPauseResumeCycles(t *testing.T, recycle bool) {
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const (
		cycles    = 40
		valueSize = 200
		perBatch  = 10      // 2 KiB batches: a fetch gets several, none past the fetch size
		fetchSize = 8 << 10 // so a chunk holds at most fetchSize/valueSize messages
		queued    = 2       // queued.max.message.chunks
		paused    = 20      // messages of partition 1 produced and read while partition 0 is paused
		resumed   = 5       // messages of partition 0 read after each Resume
		p0Count   = 8000    // more than the fetcher can get ahead in every cycle
		nextWait  = 15 * time.Second
	)
	topic := newTopic(t, c, "fetch-pause-cycles", 2, 1)
	produced := produceBatches(ctx, t, c, topic, 0, 0, p0Count, perBatch, valueSize)

	cfg := testConfig(t)
	cfg.NumFetchers = 1
	cfg.RecycleMessages = recycle
	m := newManager(t, cfg, clusterBrokers(c))
	s := newStream(t, queued)
	p0 := streamcore.NewPartitionTopicInfo(topic, 0, streamcore.QueueOf(s), 0, 0, fetchSize)
	p1 := streamcore.NewPartitionTopicInfo(topic, 1, streamcore.QueueOf(s), 0, 0, fetchSize)
	if err := m.StartConnections(ctx, []*streamcore.PartitionTopicInfo{p0, p1}); err != nil {
		t.Fatal(err)
	}
	defer m.StopConnections()

	var got []*streamcore.Message
	next := func(what string) *streamcore.Message {
		t.Helper()
		nctx, ncancel := context.WithTimeout(ctx, nextWait)
		defer ncancel()
		msg, err := s.Next(nctx)
		if err != nil {
			t.Fatalf("%s, after %d messages: %v", what, len(got), err)
		}
		got = append(got, &streamcore.Message{Topic: msg.Topic, Partition: msg.Partition, Offset: msg.Offset,
			Key: bytes.Clone(msg.Key), Value: bytes.Clone(msg.Value)})
		return msg
	}
	// What the consumer holds of partition 0: fetched and not yet
	// consumed. The chunks alive of one stream are its queue and the one
	// being read (the README's T × (Q + 1); the chunk a fetcher is
	// queueing has not moved the fetched offset yet), each at most
	// fetchSize bytes of records.
	bound := int64((queued + 1) * (fetchSize / valueSize))
	var maxHeld int64
	held := func() {
		if h := p0.FetchedOffset() - p0.ConsumedOffset(); h > maxHeld {
			maxHeld = h
		}
	}
	for cycle := range cycles {
		p0.Pause()
		produced = merge(produced, produceBatches(ctx, t, c, topic, 1, p0Count+cycle*paused, paused, perBatch, valueSize))
		for range paused {
			msg := next(fmt.Sprintf("cycle %d, partition 0 paused", cycle))
			if msg.Partition != 1 {
				t.Fatalf("cycle %d: partition %d offset %d handed out while partition 0 is paused", cycle, msg.Partition, msg.Offset)
			}
		}
		held()
		p0.Resume()
		testwait.WaitFor(t, nextWait, func() bool {
			return streamcore.QueueOf(s).Len() == queued
		}, "%s", fmt.Sprintf("cycle %d: the queue full again", cycle))
		held()
		for n := 0; n < resumed; n++ {
			if msg := next(fmt.Sprintf("cycle %d, partition 0 resumed", cycle)); msg.Partition != 0 {
				t.Fatalf("cycle %d: partition %d offset %d handed out, partition 1 has nothing new", cycle, msg.Partition, msg.Offset)
			}
		}
		held()
	}
	t.Logf("after %d Pause/Resume cycles: at most %d messages of the paused partition held (bound %d: %d chunks of at most %d)",
		cycles, maxHeld, bound, queued+1, fetchSize/valueSize)
	if maxHeld > bound {
		t.Errorf("the consumer held %d messages of the paused partition, more than %d chunks of at most %d (%d)",
			maxHeld, queued+1, fetchSize/valueSize, bound)
	}
	for len(got) < produced.Count() {
		next("reading the rest")
	}
	nctx, ncancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer ncancel()
	if msg, err := s.Next(nctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a message past the produced ones: %v, %v", msg, err)
	}
	checkExactlyOnce(t, got, produced)
}

// produceBatches writes n keyed messages (as testcluster.Produce, sequence
// numbers from firstSeq on) of size bytes to partition of topic, in
// batches of per messages.
func produceBatches(ctx context.Context, t *testing.T, c *testcluster.Cluster, topic string, partition int32, firstSeq, n, per, size int) testcluster.Produced {
	t.Helper()
	cfg := testcluster.SaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Flush.Messages = per
	cfg.Producer.Flush.MaxMessages = per
	cfg.Producer.Flush.Frequency = time.Minute
	cfg.Producer.Return.Successes = true
	p, err := sarama.NewSyncProducer(c.BrokerAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out := testcluster.Produced{Offsets: map[int32][]int64{}, Seqs: map[int32][]int{}}
	for first := 0; first < n; first += per {
		msgs := make([]*sarama.ProducerMessage, min(per, n-first))
		for i := range msgs {
			seq := firstSeq + first + i
			msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: partition, Key: sarama.StringEncoder(fmt.Sprintf("key-%d", seq)),
				Value: sarama.ByteEncoder(testcluster.MessageValue(seq, size))}
		}
		if err := p.SendMessages(msgs); err != nil {
			t.Fatal(err)
		}
		for i, m := range msgs {
			out.Offsets[partition] = append(out.Offsets[partition], m.Offset)
			out.Seqs[partition] = append(out.Seqs[partition], firstSeq+first+i)
		}
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
	}
	return out
}
