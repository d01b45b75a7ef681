//go:build matrix

package connector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// The broker matrix (make test-matrix): the connector in ZooKeeper mode
// against two-broker clusters of every release in
// testcluster.BrokerVersions. make test covers Kafka 3.9 alone.
//
// testcluster.EnvMatrixBrokers (comma-separated releases) narrows the
// run. A release whose brokers cannot start fails the test.

// TestBrokerMatrix runs, per broker release: every message format the
// release writes with every codec it accepts, the formats mixed in one
// partition (1.1.1 and newer), offsets committed to
// ZooKeeper and to Kafka and resumed, and leader changes (controlled
// shutdown, then a killed leader) under a consuming group.
func TestBrokerMatrix(t *testing.T) {
	releases, err := testcluster.MatrixBrokerVersions()
	require.NoError(t, err)
	for _, v := range releases {
		t.Run(v, func(t *testing.T) {
			opts := testcluster.Options{BrokerVersion: v, Brokers: 2}
			if v == testcluster.BrokerVersion39 {
				// Kafka 3.x honours message.format.version only below
				// inter.broker.protocol.version 3.0: a cluster
				// upgraded from 2.x that has not yet bumped it, which
				// is how a 3.9 broker still writes v0 and v1 data.
				opts.BrokerProperties = map[string]string{"inter.broker.protocol.version": "2.8"}
			}
			c := testcluster.Private(t, opts)
			t.Run("formats and codecs", func(t *testing.T) { matrixFormats(t, c) })
			if c.BrokerAtLeast(testcluster.BrokerVersion111) {
				t.Run("formats mixed in a partition", func(t *testing.T) { matrixMixedFormats(t, c) })
			}
			t.Run("offsets in zookeeper", func(t *testing.T) { matrixOffsets(t, c, OffsetsStorageZooKeeper) })
			t.Run("offsets in kafka", func(t *testing.T) { matrixOffsets(t, c, OffsetsStorageKafka) })
			t.Run("leader changes", func(t *testing.T) { matrixLeaderChanges(t, c) })
		})
	}
}

// matrixTopic is one topic of the formats test.
type matrixTopic struct {
	name   string
	magic  int // message format
	codec  sarama.CompressionCodec
	append bool // message.timestamp.type=LogAppendTime
}

// messageFormats maps each message format a release can write to the
// topic-level message.format.version that selects it. 0.10.2 predates
// record batches (v2).
func messageFormats(c *testcluster.Cluster) map[int]string {
	f := map[int]string{0: "0.9.0", 1: "0.10.0"}
	if c.BrokerAtLeast(testcluster.BrokerVersion111) {
		f[2] = "1.0"
	}
	return f
}

// matrixFormats writes a topic per message format, codec and timestamp
// type, and reads them all with one connector: every message once, in
// offset order per partition, with its key, value and the timestamp its
// format carries. lz4 in format v0 has Kafka's own frame header checksum
// (KAFKA-3160), which the fetcher accepts.
func matrixFormats(t *testing.T, c *testcluster.Cluster) {
	ctx := testwait.Context(t, 5*time.Minute)
	const n = 150
	codecs := []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionGZIP, sarama.CompressionSnappy, sarama.CompressionLZ4}
	var topics []matrixTopic
	for magic, version := range messageFormats(c) {
		cs := codecs
		// zstd needs record batches (v2) and a 2.1+ broker.
		if magic == 2 && c.BrokerAtLeast(testcluster.BrokerVersion282) {
			cs = append(slices.Clone(cs), sarama.CompressionZSTD)
		}
		for _, codec := range cs {
			topics = append(topics, matrixTopic{magic: magic, codec: codec})
		}
		if magic >= 1 {
			topics = append(topics, matrixTopic{magic: magic, codec: sarama.CompressionGZIP, append: true})
			topics = append(topics, matrixTopic{magic: magic, codec: sarama.CompressionNone, append: true})
		}
		for i := range topics {
			tp := &topics[i]
			if tp.name != "" {
				continue
			}
			suffix := ""
			if tp.append {
				suffix = "-logappend"
			}
			tp.name = testcluster.UniqueName(fmt.Sprintf("fmt-v%d-%s%s", magic, tp.codec, suffix))
			configs := map[string]string{"message.format.version": version}
			if tp.append {
				configs["message.timestamp.type"] = "LogAppendTime"
			}
			require.NoError(t, c.CreateTopicWithConfig(ctx, tp.name, 2, 2, configs), "topic %s", tp.name)
		}
	}
	start := time.Now()
	for _, tp := range topics {
		_, err := c.Produce(ctx, tp.name, n, testcluster.ProduceOptions{
			Partition: -1, Compression: tp.codec, ValueSize: 64, NotIdempotent: tp.magic < 2,
		})
		require.NoError(t, err, "produce to %s", tp.name)
	}

	conn := newConnector(t, testConfig(c, testcluster.UniqueName("g-fmt")))
	counts := map[string]int{}
	for _, tp := range topics {
		counts[tp.name] = 1
	}
	streams, err := conn.CreateMessageStreams(ctx, counts)
	require.NoError(t, err)
	col := newMessageCollector()
	for _, tp := range topics {
		col.read(ctx, streams[tp.name][0])
	}
	for _, tp := range topics {
		t.Run(fmt.Sprintf("v%d %s append=%v", tp.magic, tp.codec, tp.append), func(t *testing.T) {
			msgs := col.waitTopic(t, tp.name, n, 2*time.Minute)
			checkMatrixMessages(t, tp, msgs, n, start)
		})
	}
	shutdown(t, conn)
	col.wg.Wait()
}

// checkMatrixMessages checks the n messages read from one topic of
// matrixFormats.
func checkMatrixMessages(t *testing.T, tp matrixTopic, msgs []*streamcore.Message, n int, start time.Time) {
	seen := map[int]int{}
	last := map[int32]int64{}
	for _, m := range msgs {
		seq, err := testcluster.ParseSeq(m.Value)
		require.NoError(t, err)
		seen[seq]++
		require.Equal(t, "key-"+strconv.Itoa(seq), string(m.Key), "key of seq %d", seq)
		require.True(t, bytes.Equal(testcluster.MessageValue(seq, 64), m.Value), "value of seq %d", seq)
		if prev, ok := last[m.Partition]; ok {
			require.Greater(t, m.Offset, prev, "partition %d out of order", m.Partition)
		}
		last[m.Partition] = m.Offset
		switch {
		case tp.magic == 0:
			require.Equal(t, streamcore.NoTimestampType, m.TimestampType, "format v0 has no timestamps")
			require.True(t, m.Timestamp.IsZero(), "format v0 has no timestamps: %v", m.Timestamp)
		default:
			want := streamcore.CreateTime
			if tp.append {
				want = streamcore.LogAppendTime
			}
			require.Equal(t, want, m.TimestampType, "format v%d timestamp type", tp.magic)
			require.WithinRange(t, m.Timestamp, start.Add(-time.Minute), time.Now().Add(time.Minute), "timestamp of seq %d", seq)
		}
	}
	require.Len(t, msgs, n, "every message once")
	require.Len(t, seen, n, "every sequence number")
}

// matrixOffsets consumes a topic, commits at shutdown to storage, checks the
// committed offsets there, and has a new member of the group resume from
// them.
func matrixOffsets(t *testing.T, c *testcluster.Cluster, storage string) {
	ctx := testwait.Context(t, 4*time.Minute)
	const n, more = 200, 50
	topic := testcluster.UniqueName("offsets-" + storage)
	require.NoError(t, c.CreateTopic(ctx, topic, 2, 2))
	produced, err := c.Produce(ctx, topic, n, testcluster.ProduceOptions{Partition: -1, ValueSize: 64})
	require.NoError(t, err)
	group := testcluster.UniqueName("g-offsets")
	cfg := testConfig(c, group)
	cfg.OffsetsStorage = storage
	dual := false // Kafka's default is true (see TestKafkaOffsetStorage)
	cfg.DualCommitEnabled = &dual

	conn, err := New(ctx, cfg)
	require.NoError(t, err)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	first := newCollector()
	first.read(ctx, "first", streams[topic][0])
	first.waitAll(t, 0, n, 2*time.Minute)
	require.NoError(t, conn.Shutdown(ctx))
	first.wg.Wait()

	var committed map[int32]int64
	if storage == OffsetsStorageKafka {
		committed = fetchKafkaOffsets(t, c, group, topic, 2)
		require.Empty(t, readOffsets(t, c, group, topic, 2), "offsets.storage=kafka writes nothing to ZooKeeper")
	} else {
		committed = readOffsets(t, c, group, topic, 2)
	}
	for p, offs := range produced.Offsets {
		require.Equal(t, offs[len(offs)-1]+1, committed[p], "committed offset of partition %d (all: %v)", p, committed)
	}

	_, err = c.Produce(ctx, topic, more, testcluster.ProduceOptions{Partition: -1, FirstSeq: n, ValueSize: 64})
	require.NoError(t, err)
	conn2 := newConnector(t, cfg)
	streams, err = conn2.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	second := newCollector()
	second.read(ctx, "second", streams[topic][0])
	rs := second.waitAll(t, n, more, 2*time.Minute)
	for _, r := range rs {
		require.GreaterOrEqual(t, r.Seq, n, "message %d was consumed and committed before", r.Seq)
	}
	require.Len(t, rs, more)
}

// matrixLeaderChanges moves the leaders of a replicated topic under a
// consuming member twice, by a controlled shutdown of the leader and by
// killing the next one, and checks that the member reads every message
// once, in order.
func matrixLeaderChanges(t *testing.T, c *testcluster.Cluster) {
	ctx := testwait.Context(t, 5*time.Minute)
	const batch = 100
	topic := testcluster.UniqueName("leaders")
	require.NoError(t, c.CreateTopic(ctx, topic, 2, 2))
	produce := func(first int) {
		t.Helper()
		_, err := c.Produce(ctx, topic, batch, testcluster.ProduceOptions{Partition: -1, FirstSeq: first, ValueSize: 64})
		require.NoError(t, err)
	}
	produce(0)
	cfg := testConfig(c, testcluster.UniqueName("g-leaders"))
	conn := newConnector(t, cfg)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col := newCollector()
	col.read(ctx, "member", streams[topic][0])
	col.waitAll(t, 0, batch, 2*time.Minute)

	// A controlled shutdown moves the leadership before the broker goes.
	leader := waitLeader(t, c, topic, -1)
	require.NoError(t, c.StopBroker(leader))
	other := waitLeader(t, c, topic, leader)
	produce(batch)
	col.waitAll(t, 0, 2*batch, 2*time.Minute)
	require.NoError(t, c.RestartBroker(ctx, leader))
	waitFullISR(t, c, topic)

	// A killed leader: the controller moves leadership when its
	// ZooKeeper session expires; the member's fetcher meanwhile sees a
	// refused connection.
	other = waitLeader(t, c, topic, -1)
	require.NoError(t, c.KillBroker(other))
	waitLeader(t, c, topic, other)
	produce(2 * batch)
	rs := col.waitAll(t, 0, 3*batch, 2*time.Minute)
	require.NoError(t, c.RestartBroker(ctx, other))
	shutdown(t, conn)
	col.wg.Wait()
	checkOrder(t, rs)
	require.Len(t, rs, 3*batch, "every message once")
}

// waitLeader waits until partition 0 of topic has a leader other than
// not (-1: any) and returns it.
func waitLeader(t *testing.T, c *testcluster.Cluster, topic string, not int) int {
	t.Helper()
	var st testcluster.PartitionState
	var err error
	matrixWaitFor(t, time.Minute, func() bool {
		st, err = c.ReadPartitionState(context.Background(), topic, 0)
		return err == nil && st.Leader >= 0 && st.Leader != not
	}, func() string {
		return fmt.Sprintf("%s-0 has a leader other than %d (state %+v, err %v)", topic, not, st, err)
	})
	return st.Leader
}

// waitFullISR waits until both partitions of topic have both brokers in
// sync, so that killing either loses nothing.
func waitFullISR(t *testing.T, c *testcluster.Cluster, topic string) {
	t.Helper()
	matrixWaitFor(t, time.Minute, func() bool {
		for p := int32(0); p < 2; p++ {
			st, err := c.ReadPartitionState(context.Background(), topic, p)
			if err != nil || len(st.ISR) < 2 {
				return false
			}
		}
		return true
	}, func() string { return topic + ": the restarted broker rejoins the ISR" })
}

// matrixWaitFor polls cond until it holds, failing the test with what()
// after timeout.
func matrixWaitFor(t *testing.T, timeout time.Duration, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what())
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-t.Context().Done():
			t.Fatalf("test ended waiting until %s", what())
		}
	}
}

// messageCollector keeps every message read, by topic.
type messageCollector struct {
	wg      sync.WaitGroup
	mu      sync.Mutex
	msgs    map[string][]*streamcore.Message
	errs    []error
	changed chan struct{}
}

func newMessageCollector() *messageCollector {
	return &messageCollector{msgs: map[string][]*streamcore.Message{}, changed: make(chan struct{}, 1)}
}

// read consumes s until ctx ends or the stream shuts down.
func (c *messageCollector) read(ctx context.Context, s *streamcore.KafkaStream) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			msg, err := s.Next(ctx)
			if err != nil && (errors.Is(err, ErrShutdown) || ctx.Err() != nil) {
				break
			}
			c.mu.Lock()
			if err != nil {
				c.errs = append(c.errs, err)
			} else {
				c.msgs[msg.Topic] = append(c.msgs[msg.Topic], msg)
			}
			c.mu.Unlock()
			select {
			case c.changed <- struct{}{}:
			default:
			}
		}
	}()
}

// waitTopic waits until n messages of topic were read, and a little more
// for any duplicate, then returns them.
func (c *messageCollector) waitTopic(t *testing.T, topic string, n int, timeout time.Duration) []*streamcore.Message {
	t.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		got := len(c.msgs[topic])
		errs := slices.Clone(c.errs)
		c.mu.Unlock()
		if got >= n {
			time.Sleep(200 * time.Millisecond)
			c.mu.Lock()
			defer c.mu.Unlock()
			return slices.Clone(c.msgs[topic])
		}
		select {
		case <-c.changed:
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%s: %d of %d messages arrived (errors: %v)", topic, got, n, errs)
		}
	}
}
