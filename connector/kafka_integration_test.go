package connector

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/kafkagroup"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zkgroup"
)

// TestKafkaModeConsumeCommitResume: a Kafka-coordinated member, without
// any ZooKeeper, reads a topic with two streams, commits at Shutdown
// (offsets land in the coordinator, rebalances and commits reach the
// metrics with store "kafka"), and the next member of the group resumes
// exactly there.
func TestKafkaModeConsumeCommitResume(t *testing.T) {
	t.Parallel()
	bothClusters(t, func(t *testing.T, c *testcluster.Cluster) {
		topic := newTopic(t, c, 4, 200)
		group := testcluster.UniqueName("g-kafka")
		cfg := kafkaConfig(c, group)
		m := &recordingMetrics{}
		cfg.Metrics = m
		conn, err := New(t.Context(), cfg)
		require.NoError(t, err)
		ctx := testwait.Context(t, 3*time.Minute)
		streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 2})
		require.NoError(t, err)
		st := conn.Stats()
		require.Len(t, st.Partitions, 4, "the partitions are assigned when CreateMessageStreams returns")
		col := newCollector()
		for i, s := range streams[topic] {
			col.read(ctx, fmt.Sprint("a", i), s)
		}
		rs := col.waitAll(t, 0, 200, time.Minute)
		checkOrder(t, rs)
		// Two streams, two partitions each, as the range assignor
		// spreads a consumer's partitions over its threads.
		require.Equal(t, map[string][]int32{"a0": {0, 1}, "a1": {2, 3}}, partitionsByConsumer(rs))
		shutdown(t, conn)
		col.wg.Wait()
		got := kafkaCommitted(t, c, group, topic, 4)
		total := int64(0)
		for _, off := range got {
			total += off
		}
		require.Equal(t, int64(200), total, "the end offsets are committed to the coordinator: %v", got)
		m.mu.Lock()
		require.NotEmpty(t, m.rebalances)
		require.Equal(t, RebalanceSucceeded, m.rebalances[0].Outcome)
		m.mu.Unlock()
		require.NotEmpty(t, m.commitsTo(OffsetsStorageKafka))
		require.Empty(t, m.commitsTo(OffsetsStorageZooKeeper))

		_, err = c.Produce(ctx, topic, 100, testcluster.ProduceOptions{Partition: -1, FirstSeq: 200})
		require.NoError(t, err)
		conn2 := newConnector(t, kafkaConfig(c, group))
		streams, err = conn2.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		col2 := newCollector()
		col2.read(ctx, "b", streams[topic][0])
		rs = col2.waitAll(t, 200, 100, time.Minute)
		for seq, n := range distinct(rs) {
			require.GreaterOrEqual(t, seq, 200, "message %d was read again after the commit", seq)
			require.Equal(t, 1, n)
		}
	})
}

// TestKafkaModeTwoMembersShare: two Kafka-coordinated members split a
// topic; when one shuts down (LeaveGroup) the other takes everything over
// at once from the committed offsets; every message is read, at least
// once and nothing twice outside the hand-over.
func TestKafkaModeTwoMembersShare(t *testing.T) {
	t.Parallel()
	bothClusters(t, func(t *testing.T, c *testcluster.Cluster) {
		topic := newTopic(t, c, 4, 100)
		group := testcluster.UniqueName("g-kshare")
		cfg := kafkaConfig(c, group)
		ctx := testwait.Context(t, 3*time.Minute)
		col := newCollector()
		a := newConnector(t, cfg)
		sa, err := a.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		col.read(ctx, "a", sa[topic][0])
		b, err := New(ctx, cfg)
		require.NoError(t, err)
		sb, err := b.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		col.read(ctx, "b", sb[topic][0])
		ms := waitGroup(t, c, group, topic, 4, 2)
		require.Len(t, ms[0].partitions[topic], 2)
		_, err = c.Produce(ctx, topic, 100, testcluster.ProduceOptions{Partition: -1, FirstSeq: 100})
		require.NoError(t, err)
		col.waitAll(t, 0, 200, time.Minute)

		left := time.Now()
		shutdown(t, b)
		waitGroup(t, c, group, topic, 4, 1)
		require.Less(t, time.Since(left), cfg.SessionTimeout, "the leaving member's partitions moved at once")
		_, err = c.Produce(ctx, topic, 100, testcluster.ProduceOptions{Partition: -1, FirstSeq: 200})
		require.NoError(t, err)
		rs := col.waitAll(t, 0, 300, time.Minute)
		checkOrder(t, rs)
		again := 0
		for _, n := range distinct(rs) {
			again += n - 1
		}
		require.Zero(t, again, "an orderly hand-over (commit, then leave) redelivers nothing")
		select {
		case err := <-a.Errors():
			require.False(t, errors.Is(err, zkgroup.ErrOwnershipLost), "the staying member lost nothing: %v", err)
		default:
		}
	})
}

// TestKafkaModeWildcard: a filter subscription follows topics created
// later, through kafkagroup's metadata checks.
func TestKafkaModeWildcard(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedKRaft(t)
	prefix := testcluster.UniqueName("kwc")
	group := testcluster.UniqueName("g-kwc")
	ctx := testwait.Context(t, 3*time.Minute)
	require.NoError(t, c.CreateTopic(ctx, prefix+"-a", 2, 1))
	conn := newConnector(t, kafkaConfig(c, group))
	streams, err := conn.CreateMessageStreamsByFilter(ctx, Whitelist(prefix+"-.*"), 2)
	require.NoError(t, err)
	col := newCollector()
	for _, s := range streams {
		col.read(ctx, "wc", s)
	}
	require.NoError(t, c.CreateTopic(ctx, prefix+"-late", 3, 1))
	_, err = c.Produce(ctx, prefix+"-late", 90, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)
	col.waitAll(t, 0, 90, time.Minute)
	_, err = c.Produce(ctx, prefix+"-a", 20, testcluster.ProduceOptions{Partition: -1, FirstSeq: 90})
	require.NoError(t, err)
	col.waitAll(t, 90, 20, time.Minute)
}

// TestKafkaModeFencedInstanceIsFatal: a second member with the same
// group.instance.id fences the first, which gets a fatal error on Errors
// and stops consuming, as Java's consumer does; the second consumes.
func TestKafkaModeFencedInstanceIsFatal(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedKRaft(t)
	topic := newTopic(t, c, 2, 20)
	group := testcluster.UniqueName("g-static")
	cfg := kafkaConfig(c, group)
	cfg.GroupInstanceID = "instance-1"
	ctx := testwait.Context(t, 3*time.Minute)
	a := newConnector(t, cfg)
	_, err := a.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	b := newConnector(t, cfg)
	sb, err := b.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col := newCollector()
	col.read(ctx, "b", sb[topic][0])
	deadline := time.After(30 * time.Second)
	for fatal := false; !fatal; {
		select {
		case err := <-a.Errors():
			fatal = errors.Is(err, kafkagroup.ErrFatal)
			if fatal {
				require.ErrorIs(t, err, sarama.ErrFencedInstancedId)
			}
		case <-deadline:
			t.Fatal("the fenced member got no fatal error")
		}
	}
	require.Empty(t, a.Stats().Partitions, "the fenced member owns nothing")
	col.waitAll(t, 0, 20, time.Minute)
}

// TestKafkaModeShutdownFromListener: Shutdown called from the rebalance
// listener with its context returns at once, also from another goroutine
// the listener waits for with a context derived from it, and completes
// once the listener returns.
func TestKafkaModeShutdownFromListener(t *testing.T) {
	t.Parallel()
	for _, elsewhere := range []bool{false, true} {
		name := "listener goroutine"
		if elsewhere {
			name = "another goroutine"
		}
		t.Run(name, func(t *testing.T) {
			c := testcluster.Shared(t)
			topic := newTopic(t, c, 2, 20)
			group := testcluster.UniqueName("g-kshut")
			cfg := kafkaConfig(c, group)
			l := &shutdownListener{elsewhere: elsewhere, returned: make(chan error, 1)}
			conn, err := New(t.Context(), cfg, WithRebalanceListener(l))
			require.NoError(t, err)
			ctx := testwait.Context(t, 3*time.Minute)
			streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
			require.NoError(t, err)
			col := newCollector()
			col.read(ctx, "a", streams[topic][0])
			col.waitAll(t, 0, 20, time.Minute)
			l.conn = conn
			other := newConnector(t, cfg) // its join starts a rebalance
			_, err = other.CreateMessageStreams(ctx, map[string]int{topic: 1})
			require.NoError(t, err)
			awaitShutdownFromListener(t, ctx, l, col)
			waitGroup(t, c, group, topic, 2, 1)
		})
	}
}
