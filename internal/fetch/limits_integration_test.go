package fetch

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestIntegrationMessageTooLarge: a message bigger than the fetch size
// surfaces streamcore.ErrMessageTooLarge on its stream and stops its partition
// at that message.
func TestIntegrationMessageTooLarge(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := newTopic(t, c, "fetch-too-large", 2, 1)
	// Partition 1: 5 small messages, a 20 KiB one, 5 small ones, each
	// group in batches of its own. Partition 0: small messages only.
	small := produce(ctx, t, c, topic, 5, testcluster.ProduceOptions{Partition: 1, ValueSize: 100})
	big := produce(ctx, t, c, topic, 1, testcluster.ProduceOptions{Partition: 1, ValueSize: 20 << 10, FirstSeq: 5})
	produce(ctx, t, c, topic, 5, testcluster.ProduceOptions{Partition: 1, ValueSize: 100, FirstSeq: 6})
	produce(ctx, t, c, topic, 5000, testcluster.ProduceOptions{Partition: 0, ValueSize: 100, FirstSeq: 100})
	bigOffset := big.Offsets[1][0]
	tp1 := zkutil.TopicPartition{Topic: topic, Partition: 1}

	// nextError reads s up to its first error.
	nextError := func(t *testing.T, s *streamcore.KafkaStream) ([]*streamcore.Message, *streamcore.PartitionError) {
		var got []*streamcore.Message
		for {
			msg, err := s.Next(ctx)
			var perr *streamcore.PartitionError
			switch {
			case err == nil:
				got = append(got, msg)
			case errors.As(err, &perr):
				return got, perr
			default:
				t.Fatal(err)
			}
		}
	}

	t.Run("alone", func(t *testing.T) {
		// The broker sends the big message whole: it is the first batch
		// of the only partition.
		m := newManager(t, testConfig(t), clusterBrokers(c))
		s := newStream(t, 2)
		if err := m.StartConnections(ctx, []*streamcore.PartitionTopicInfo{streamcore.NewPartitionTopicInfo(topic, 1, streamcore.QueueOf(s), 0, 0, 1024)}); err != nil {
			t.Fatal(err)
		}
		got, perr := nextError(t, s)
		if !errors.Is(perr, streamcore.ErrMessageTooLarge) || perr.Partition != 1 {
			t.Errorf("error %v, want ErrMessageTooLarge on partition 1", perr)
		}
		t.Logf("stream error: %v", perr)
		checkExactlyOnce(t, got, small)
		time.Sleep(300 * time.Millisecond)
		if got := m.StopConnections()[tp1]; got != bigOffset {
			t.Errorf("partition 1 stopped at %d, want %d", got, bigOffset)
		}
	})

	t.Run("paused with the error queued", func(t *testing.T) {
		// The stream drops the paused partition's chunks, the error with
		// them, and moves it back: the fetcher, stopped at the error,
		// fetches it again once resumed, and the messages before the
		// error come out once, then the error.
		m := newManager(t, testConfig(t), clusterBrokers(c))
		s := newStream(t, 2)
		p := streamcore.NewPartitionTopicInfo(topic, 1, streamcore.QueueOf(s), 0, 0, 1024)
		if err := m.StartConnections(ctx, []*streamcore.PartitionTopicInfo{p}); err != nil {
			t.Fatal(err)
		}
		testwait.WaitFor(t, 30*time.Second, func() bool { return p.Stopped() }, "the error queued")
		p.Pause()
		nctx, ncancel := context.WithTimeout(ctx, 200*time.Millisecond)
		msg, err := s.Next(nctx)
		ncancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("paused: %v, %v", msg, err)
		}
		if p.Stopped() || p.FetchedOffset() != 0 || streamcore.QueueOf(s).Len() != 0 {
			t.Fatalf("after the drop: stopped %v, fetched offset %d, %d chunks queued; want false, 0, 0",
				p.Stopped(), p.FetchedOffset(), streamcore.QueueOf(s).Len())
		}
		p.Resume()
		got, perr := nextError(t, s)
		if !errors.Is(perr, streamcore.ErrMessageTooLarge) || perr.Partition != 1 {
			t.Errorf("error %v, want ErrMessageTooLarge on partition 1", perr)
		}
		checkExactlyOnce(t, got, small)
		if !p.Stopped() {
			t.Error("the fetcher is not stopped at the error again")
		}
		if got := m.StopConnections()[tp1]; got != bigOffset {
			t.Errorf("partition 1 stopped at %d, want %d", got, bigOffset)
		}
	})

	t.Run("behind another partition", func(t *testing.T) {
		// Sharing a fetcher with a busy partition: the broker sends
		// partition 1 nothing while partition 0 comes first in a request
		// (the order is random) and the big message whole otherwise.
		m := newManager(t, testConfig(t), clusterBrokers(c))
		for i := range 3 {
			s0, s1 := newStream(t, 2), newStream(t, 2)
			infos := []*streamcore.PartitionTopicInfo{
				streamcore.NewPartitionTopicInfo(topic, 1, streamcore.QueueOf(s1), bigOffset, bigOffset, 1024),
				streamcore.NewPartitionTopicInfo(topic, 0, streamcore.QueueOf(s0), 0, 0, 1024),
			}
			col0 := collect(s0)
			if err := m.StartConnections(ctx, infos); err != nil {
				t.Fatal(err)
			}
			got, perr := nextError(t, s1)
			if !errors.Is(perr, streamcore.ErrMessageTooLarge) || len(got) != 0 {
				t.Fatalf("round %d: %d messages then %v, want ErrMessageTooLarge", i, len(got), perr)
			}
			testwait.WaitFor(t, 30*time.Second, func() bool { return col0.count() >= 1000 }, "partition 0 read on")
			if got := m.StopConnections()[tp1]; got != bigOffset {
				t.Errorf("round %d: partition 1 stopped at %d, want %d", i, got, bigOffset)
			}
			col0.stop()
		}
	})
}

// TestIntegrationMessageTooLargeMidBatch: a producer batch holds small
// messages, one larger than the fetch size, and small ones again. The
// broker sends the batch whole; the messages before the big one are
// delivered, then the stream reports ErrMessageTooLarge, the partition
// stays at the big message, and a larger fetch size reads on from there
// with nothing skipped.
func TestIntegrationMessageTooLargeMidBatch(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := newTopic(t, c, "fetch-too-large-mid", 1, 1)
	sizes := []int{100, 100, 100, 100, 100, 20 << 10, 100, 100, 100, 100, 100}
	batch := produceOneBatch(ctx, t, c, topic, 0, 0, sizes)
	rest := produce(ctx, t, c, topic, 20, testcluster.ProduceOptions{Partition: 0, ValueSize: 100, FirstSeq: len(sizes)})
	bigOffset := batch.Offsets[0][5]
	tp := zkutil.TopicPartition{Topic: topic, Partition: 0}

	m := newManager(t, testConfig(t), clusterBrokers(c))
	s := newStream(t, 2)
	p := streamcore.NewPartitionTopicInfo(topic, 0, streamcore.QueueOf(s), 0, 0, 1024)
	if err := m.StartConnections(ctx, []*streamcore.PartitionTopicInfo{p}); err != nil {
		t.Fatal(err)
	}
	readCtx, readCancel := context.WithTimeout(ctx, 20*time.Second)
	var got []*streamcore.Message
	var err error
	for err == nil {
		var msg *streamcore.Message
		if msg, err = s.Next(readCtx); err == nil {
			got = append(got, msg)
		}
	}
	readCancel()
	if !errors.Is(err, streamcore.ErrMessageTooLarge) {
		t.Fatalf("after %d messages: %v, want ErrMessageTooLarge", len(got), err)
	}
	t.Logf("stream error: %v", err)
	checkExactlyOnce(t, got, testcluster.Produced{
		Offsets: map[int32][]int64{0: batch.Offsets[0][:5]}, Seqs: map[int32][]int{0: batch.Seqs[0][:5]}})
	time.Sleep(300 * time.Millisecond)
	if got := m.StopConnections()[tp]; got != bigOffset {
		t.Fatalf("partition stopped at %d, want %d", got, bigOffset)
	}

	// With room for the big message, everything from it on arrives once.
	s = newStream(t, 2)
	p = streamcore.NewPartitionTopicInfo(topic, 0, streamcore.QueueOf(s), bigOffset, bigOffset, 64<<10)
	want := merge(testcluster.Produced{
		Offsets: map[int32][]int64{0: batch.Offsets[0][5:]}, Seqs: map[int32][]int{0: batch.Seqs[0][5:]}}, rest)
	msgs, _ := readAll(ctx, t, m, []*streamcore.PartitionTopicInfo{p}, []*streamcore.KafkaStream{s}, want.Count())
	checkExactlyOnce(t, msgs, want)
}

// produceOneBatch writes one keyed message per entry of sizes (values of
// that size, sequence numbers from firstSeq) to partition in a single
// produce request, hence a single record batch.
func produceOneBatch(ctx context.Context, t *testing.T, c *testcluster.Cluster, topic string, partition int32, firstSeq int, sizes []int) testcluster.Produced {
	t.Helper()
	cfg := testcluster.SaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Flush.Messages = len(sizes)
	cfg.Producer.Flush.MaxMessages = len(sizes)
	cfg.Producer.Flush.Frequency = time.Minute
	cfg.Producer.Return.Successes = true
	p, err := sarama.NewSyncProducer(c.BrokerAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	msgs := make([]*sarama.ProducerMessage, len(sizes))
	for i, size := range sizes {
		seq := firstSeq + i
		msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: partition, Metadata: seq,
			Key:   sarama.StringEncoder(fmt.Sprintf("key-%d", seq)),
			Value: sarama.ByteEncoder(testcluster.MessageValue(seq, size))}
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
	out := testcluster.Produced{Offsets: map[int32][]int64{}, Seqs: map[int32][]int{}}
	for i, m := range msgs {
		out.Offsets[partition] = append(out.Offsets[partition], m.Offset)
		out.Seqs[partition] = append(out.Seqs[partition], firstSeq+i)
	}
	if ctx.Err() != nil {
		t.Fatal(ctx.Err())
	}
	return out
}

// TestIntegrationFetchSizeBoundary checks the size the fetcher computes
// for a message against the size Kafka stores: a message whose batch is
// exactly as large as the fetch size is delivered, one byte less of fetch
// size and it is too large.
func TestIntegrationFetchSizeBoundary(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := newTopic(t, c, "fetch-boundary", 1, 1)
	one := produce(ctx, t, c, topic, 1, testcluster.ProduceOptions{Partition: 0, ValueSize: 3000})
	size := logSize(t, c, topic)
	t.Logf("the batch takes %d bytes", size)

	for _, tc := range []struct {
		fetchSize int32
		tooLarge  bool
	}{{int32(size), false}, {int32(size) - 1, true}} {
		m := newManager(t, testConfig(t), clusterBrokers(c))
		s := newStream(t, 2)
		p := streamcore.NewPartitionTopicInfo(topic, 0, streamcore.QueueOf(s), 0, 0, tc.fetchSize)
		if err := m.StartConnections(ctx, []*streamcore.PartitionTopicInfo{p}); err != nil {
			t.Fatal(err)
		}
		msg, err := s.Next(ctx)
		m.StopConnections()
		switch {
		case tc.tooLarge && !errors.Is(err, streamcore.ErrMessageTooLarge):
			t.Errorf("fetch size %d: got %v, want ErrMessageTooLarge", tc.fetchSize, err)
		case !tc.tooLarge && (err != nil || msg.Offset != one.Offsets[0][0]):
			t.Errorf("fetch size %d: got %v, %v, want the message", tc.fetchSize, msg, err)
		}
	}
}

// logSize is the size of partition 0 of topic on disk.
func logSize(t *testing.T, c *testcluster.Cluster, topic string) int64 {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(c.BrokerAddrs(), testcluster.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	dirs, err := admin.DescribeLogDirs([]int32{0})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs[0] {
		for _, tp := range dir.Topics {
			if tp.Topic != topic {
				continue
			}
			for _, p := range tp.Partitions {
				if p.PartitionID == 0 {
					return p.Size
				}
			}
		}
	}
	t.Fatalf("no log dir for %s-0", topic)
	return 0
}

// TestIntegrationSlowConsumer: with nobody reading, the fetcher fills the
// queue, blocks, and stops advancing.
func TestIntegrationSlowConsumer(t *testing.T) {
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := newTopic(t, c, "fetch-slow", 1, 1)
	const total = 50_000
	produce(ctx, t, c, topic, total, testcluster.ProduceOptions{Partition: 0, ValueSize: 100})

	m := newManager(t, testConfig(t), clusterBrokers(c))
	s := newStream(t, 2)
	p := streamcore.NewPartitionTopicInfo(topic, 0, streamcore.QueueOf(s), 0, 0, 4096)
	if err := m.StartConnections(ctx, []*streamcore.PartitionTopicInfo{p}); err != nil {
		t.Fatal(err)
	}
	testwait.WaitFor(t, 30*time.Second, func() bool { return streamcore.QueueOf(s).Len() == streamcore.QueueOf(s).Cap() }, "queue full")
	time.Sleep(300 * time.Millisecond)
	blocked := p.FetchedOffset()
	time.Sleep(time.Second)
	if p.FetchedOffset() != blocked || streamcore.QueueOf(s).Len() != streamcore.QueueOf(s).Cap() {
		t.Errorf("fetched offset moved from %d to %d, queue %d/%d", blocked, p.FetchedOffset(), streamcore.QueueOf(s).Len(), streamcore.QueueOf(s).Cap())
	}
	// Two queued chunks and the one being put: three producer batches at
	// most (a batch larger than the fetch size comes whole), each below
	// sarama's 1 MB limit, about 9000 messages.
	if blocked <= 0 || blocked > 3*9000 {
		t.Errorf("fetched offset %d of %d with a full queue", blocked, total)
	}
	start := time.Now()
	offsets := m.StopConnections()
	if d := time.Since(start); d > time.Second {
		t.Errorf("stop took %v", d)
	}
	if got := offsets[zkutil.TopicPartition{Topic: topic, Partition: 0}]; got != blocked {
		t.Errorf("stop returned %d, want %d", got, blocked)
	}
}

// TestIntegrationStopRestartExact: the offsets StopConnections returns
// split the log exactly: everything below them reached the streams
// (delivered or still queued), and a restart from them reads the rest.
func TestIntegrationStopRestartExact(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := newTopic(t, c, "fetch-restart", 3, 1)
	want := produce(ctx, t, c, topic, 6000, testcluster.ProduceOptions{Partition: -1, Compression: sarama.CompressionSnappy, ValueSize: 100})

	m := newManager(t, testConfig(t), clusterBrokers(c))
	var seen []*streamcore.Message
	offsets := map[zkutil.TopicPartition]int64{}
	for p := range int32(3) {
		offsets[zkutil.TopicPartition{Topic: topic, Partition: p}] = 0
	}
	for round := 0; len(seen) < want.Count(); round++ {
		if round > 50 {
			t.Fatalf("no progress after %d rounds: %d of %d messages", round, len(seen), want.Count())
		}
		streams := []*streamcore.KafkaStream{newStream(t, 2), newStream(t, 2)}
		var infos []*streamcore.PartitionTopicInfo
		for tp, off := range offsets {
			q := streamcore.QueueOf(streams[int(tp.Partition)%2])
			infos = append(infos, streamcore.NewPartitionTopicInfo(topic, tp.Partition, q, off, off, 8192))
		}
		col := collect(streams...)
		if err := m.StartConnections(ctx, infos); err != nil {
			t.Fatal(err)
		}
		target := min(len(seen)+700, want.Count())
		testwait.WaitFor(t, 30*time.Second, func() bool { return len(seen)+col.count() >= target }, "progress")
		offsets = m.StopConnections()
		seen = append(seen, col.stop()...)
		// Whatever is still queued was fetched below the returned offsets.
		for _, s := range streams {
			for {
				drainCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				msg, err := s.Next(drainCtx)
				cancel()
				if err != nil {
					break
				}
				seen = append(seen, msg)
			}
		}
		for tp, off := range offsets {
			var last int64 = -1
			for _, msg := range seen {
				if msg.Partition == tp.Partition {
					last = msg.Offset
				}
			}
			if last+1 != off {
				t.Fatalf("round %d: %s stopped at %d but the streams got up to %d", round, tp, off, last)
			}
		}
	}
	checkExactlyOnce(t, seen, want)
}
