package fetch

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// clusterBrokers lists a test cluster's brokers, whose ids are their
// indexes.
func clusterBrokers(c *testcluster.Cluster) staticBrokers {
	var out staticBrokers
	for i, addr := range c.BrokerAddrs() {
		out = append(out, BrokerInfo{ID: int32(i), Addr: addr})
	}
	return out
}

// infosFor assigns partitions 0..n-1 of topic round-robin to streams, all
// starting at offset.
func infosFor(topic string, n int32, streams []*streamcore.KafkaStream, offset int64, fetchSize int32) []*streamcore.PartitionTopicInfo {
	var out []*streamcore.PartitionTopicInfo
	for p := range n {
		q := streamcore.QueueOf(streams[int(p)%len(streams)])
		out = append(out, streamcore.NewPartitionTopicInfo(topic, p, q, offset, offset, fetchSize))
	}
	return out
}

// newTopic creates a topic with a unique name.
func newTopic(t *testing.T, c *testcluster.Cluster, prefix string, partitions int32, rf int16) string {
	t.Helper()
	return testcluster.NewTopic(t, c, testcluster.TopicSpec{Prefix: prefix, Partitions: partitions, ReplicationFactor: rf})
}

func produce(ctx context.Context, t *testing.T, c *testcluster.Cluster, topic string, n int, opts testcluster.ProduceOptions) testcluster.Produced {
	t.Helper()
	p, err := c.Produce(ctx, topic, n, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// merge adds b's messages to a.
func merge(a, b testcluster.Produced) testcluster.Produced {
	if a.Offsets == nil {
		a = testcluster.Produced{Offsets: map[int32][]int64{}, Seqs: map[int32][]int{}}
	}
	for p, offs := range b.Offsets {
		a.Offsets[p] = append(a.Offsets[p], offs...)
		a.Seqs[p] = append(a.Seqs[p], b.Seqs[p]...)
	}
	return a
}

// checkExactlyOnce verifies that msgs are exactly the produced messages,
// each once, in offset order within each partition.
func checkExactlyOnce(t *testing.T, msgs []*streamcore.Message, want testcluster.Produced) {
	t.Helper()
	gotOffsets := map[int32][]int64{}
	gotSeqs := map[int32][]int{}
	for _, m := range msgs {
		seq, err := testcluster.ParseSeq(m.Value)
		if err != nil {
			t.Fatalf("%s-%d@%d: %v", m.Topic, m.Partition, m.Offset, err)
		}
		if string(m.Key) != fmt.Sprintf("key-%d", seq) {
			t.Fatalf("%s-%d@%d: key %q for seq %d", m.Topic, m.Partition, m.Offset, m.Key, seq)
		}
		gotOffsets[m.Partition] = append(gotOffsets[m.Partition], m.Offset)
		gotSeqs[m.Partition] = append(gotSeqs[m.Partition], seq)
	}
	for p, offs := range want.Offsets {
		if !slices.Equal(gotOffsets[p], offs) {
			t.Errorf("partition %d: got %d messages %s, want %d %s", p, len(gotOffsets[p]), span(gotOffsets[p]), len(offs), span(offs))
		}
		if !slices.Equal(gotSeqs[p], want.Seqs[p]) {
			t.Errorf("partition %d: sequence numbers differ", p)
		}
	}
	for p := range gotOffsets {
		if _, ok := want.Offsets[p]; !ok {
			t.Errorf("partition %d: %d unexpected messages", p, len(gotOffsets[p]))
		}
	}
}

func span(offs []int64) string {
	if len(offs) == 0 {
		return "[]"
	}
	return fmt.Sprintf("[%d..%d]", offs[0], offs[len(offs)-1])
}

// readAll starts fetching infos into streams and collects exactly n
// messages (waiting a little to catch extras), then stops.
func readAll(ctx context.Context, t *testing.T, m *ConsumerFetcherManager, infos []*streamcore.PartitionTopicInfo, streams []*streamcore.KafkaStream, n int) ([]*streamcore.Message, map[zkutil.TopicPartition]int64) {
	t.Helper()
	col := collect(streams...)
	if err := m.StartConnections(ctx, infos); err != nil {
		t.Fatal(err)
	}
	testwait.WaitFor(t, 60*time.Second, func() bool { return col.count() >= n }, "%s", fmt.Sprintf("%d messages", n))
	time.Sleep(300 * time.Millisecond)
	offsets := m.StopConnections()
	msgs := col.stop()
	if errs := col.errors(); len(errs) > 0 {
		t.Errorf("stream errors: %v", errs)
	}
	return msgs, offsets
}

func TestIntegrationReadAllExactlyOnce(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := newTopic(t, c, "fetch-all", 4, 1)
	want := produce(ctx, t, c, topic, 4000, testcluster.ProduceOptions{Partition: -1, Compression: sarama.CompressionGZIP, ValueSize: 100})

	cfg := testConfig(t)
	cfg.NumFetchers = 2
	m := newManager(t, cfg, clusterBrokers(c))
	streams := []*streamcore.KafkaStream{newStream(t, 2), newStream(t, 2)}
	msgs, offsets := readAll(ctx, t, m, infosFor(topic, 4, streams, 0, 16*1024), streams, want.Count())
	checkExactlyOnce(t, msgs, want)
	for p, offs := range want.Offsets {
		tp := zkutil.TopicPartition{Topic: topic, Partition: p}
		if offsets[tp] != offs[len(offs)-1]+1 {
			t.Errorf("%s: stop returned %d, want %d", tp, offsets[tp], offs[len(offs)-1]+1)
		}
	}
}

func TestIntegrationCodecs(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionGZIP, sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD} {
		t.Run(codec.String(), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			topic := newTopic(t, c, "fetch-codec-"+codec.String(), 2, 1)
			want := produce(ctx, t, c, topic, 1000, testcluster.ProduceOptions{Partition: -1, Compression: codec, ValueSize: 100})
			m := newManager(t, testConfig(t), clusterBrokers(c))
			streams := []*streamcore.KafkaStream{newStream(t, 2)}
			msgs, _ := readAll(ctx, t, m, infosFor(topic, 2, streams, 0, 1<<20), streams, want.Count())
			checkExactlyOnce(t, msgs, want)
			for _, msg := range msgs {
				if msg.Timestamp.IsZero() || time.Since(msg.Timestamp) > 10*time.Minute {
					t.Fatalf("message %d has timestamp %v", msg.Offset, msg.Timestamp)
				}
			}
		})
	}
}

func TestIntegrationAutoOffsetReset(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := newTopic(t, c, "fetch-reset", 1, 1)
	first := produce(ctx, t, c, topic, 100, testcluster.ProduceOptions{Partition: 0, ValueSize: 100})
	tp := zkutil.TopicPartition{Topic: topic, Partition: 0}

	t.Run("smallest", func(t *testing.T) {
		cfg := testConfig(t)
		cfg.AutoOffsetReset = AutoOffsetResetSmallest
		m := newManager(t, cfg, clusterBrokers(c))
		streams := []*streamcore.KafkaStream{newStream(t, 2)}
		infos := infosFor(topic, 1, streams, -1, 1<<20)
		msgs, offsets := readAll(ctx, t, m, infos, streams, 100)
		checkExactlyOnce(t, msgs, first)
		if offsets[tp] != 100 {
			t.Errorf("offset %d", offsets[tp])
		}
	})
	t.Run("largest", func(t *testing.T) {
		m := newManager(t, testConfig(t), clusterBrokers(c)) // largest is the default
		s := newStream(t, 2)
		infos := infosFor(topic, 1, []*streamcore.KafkaStream{s}, -1, 1<<20)
		col := collect(s)
		if err := m.StartConnections(ctx, infos); err != nil {
			t.Fatal(err)
		}
		testwait.WaitFor(t, 30*time.Second, func() bool { return infos[0].FetchedOffset() == 100 }, "reset to the end")
		if infos[0].ConsumedOffset() != 100 {
			t.Errorf("consumed offset %d, want 100", infos[0].ConsumedOffset())
		}
		more := produce(ctx, t, c, topic, 10, testcluster.ProduceOptions{Partition: 0, ValueSize: 100, FirstSeq: 100})
		testwait.WaitFor(t, 30*time.Second, func() bool { return col.count() >= 10 }, "10 new messages")
		time.Sleep(300 * time.Millisecond)
		m.StopConnections()
		checkExactlyOnce(t, col.stop(), more)
	})
}

func TestIntegrationOutOfRangeResetsToSmallest(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := newTopic(t, c, "fetch-oor", 1, 1)
	all := produce(ctx, t, c, topic, 100, testcluster.ProduceOptions{Partition: 0, ValueSize: 100})
	if err := c.DeleteRecords(topic, 0, 40); err != nil {
		t.Fatal(err)
	}
	want := testcluster.Produced{Offsets: map[int32][]int64{0: all.Offsets[0][40:]}, Seqs: map[int32][]int{0: all.Seqs[0][40:]}}

	cfg := testConfig(t)
	cfg.AutoOffsetReset = AutoOffsetResetSmallest
	m := newManager(t, cfg, clusterBrokers(c))
	streams := []*streamcore.KafkaStream{newStream(t, 2)}
	infos := infosFor(topic, 1, streams, 10, 1<<20) // committed offset 10 was deleted
	msgs, offsets := readAll(ctx, t, m, infos, streams, 60)
	checkExactlyOnce(t, msgs, want)
	if got := offsets[zkutil.TopicPartition{Topic: topic, Partition: 0}]; got != 100 {
		t.Errorf("offset %d, want 100", got)
	}
	if infos[0].ConsumedOffset() < 40 {
		t.Errorf("consumed offset %d was not reset", infos[0].ConsumedOffset())
	}
}
