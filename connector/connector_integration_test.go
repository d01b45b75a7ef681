package connector

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zkgroup"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestOneConnectorReadsEverything: one member with several streams reads
// every message of a multi-partition topic once, in order per partition, and
// commits the end offsets at shutdown.
func TestOneConnectorReadsEverything(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	const n = 2000
	topic := newTopic(t, c, 6, n)
	group := testcluster.UniqueName("g-one")
	cfg := testConfig(c, group)
	cfg.AutoCommitInterval = time.Hour // only the commit at shutdown
	conn, err := New(t.Context(), cfg)
	require.NoError(t, err)
	ctx := testwait.Context(t, 3*time.Minute)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 3})
	require.NoError(t, err)
	require.Len(t, streams[topic], 3)
	col := newCollector()
	for i, s := range streams[topic] {
		col.read(ctx, "s"+string(rune('0'+i)), s)
	}
	rs := col.waitAll(t, 0, n, 2*time.Minute)
	require.Len(t, rs, n, "exactly once")
	checkOrder(t, rs)
	byStream := partitionsByConsumer(rs)
	require.Len(t, byStream, 3, "every stream got partitions: %v", byStream)

	_, err = conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.ErrorIs(t, err, ErrStreamsExist)

	require.NoError(t, conn.Shutdown(ctx))
	col.wg.Wait()
	require.NoError(t, conn.Shutdown(ctx), "idempotent")
	committed := readOffsets(t, c, group, topic, 6)
	var total int64
	for _, off := range committed {
		total += off
	}
	// The last message of each stream counts as consumed only if the
	// application asked for the next one, which it did (iteration ended
	// at shutdown), so everything is committed.
	require.Equal(t, int64(n), total, "committed offsets %v", committed)
}

// TestRestartResumesAtCommittedOffsets: a group that stops and starts again
// reads only what was produced in between.
func TestRestartResumesAtCommittedOffsets(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 4, 400)
	group := testcluster.UniqueName("g-resume")
	ctx := testwait.Context(t, 3*time.Minute)

	first := newCollector()
	conn, err := New(ctx, testConfig(c, group))
	require.NoError(t, err)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 2})
	require.NoError(t, err)
	for _, s := range streams[topic] {
		first.read(ctx, "first", s)
	}
	first.waitAll(t, 0, 400, 2*time.Minute)
	require.NoError(t, conn.Shutdown(ctx))
	first.wg.Wait()

	_, err = c.Produce(ctx, topic, 100, testcluster.ProduceOptions{Partition: -1, FirstSeq: 400, ValueSize: 64})
	require.NoError(t, err)
	second := newCollector()
	conn2 := newConnector(t, testConfig(c, group))
	streams, err = conn2.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	second.read(ctx, "second", streams[topic][0])
	rs := second.waitAll(t, 400, 100, 2*time.Minute)
	for _, r := range rs {
		require.GreaterOrEqual(t, r.Seq, 400, "message %d was already consumed and committed", r.Seq)
	}
	require.Len(t, rs, 100)
}

// TestThreeProcessesSplitPartitions: three connectors in separate OS
// processes split the partitions with no overlap and together read every
// message; then one leaves and one joins without loss.
func TestThreeProcessesSplitPartitions(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	const n = 3000
	topic := newTopic(t, c, 9, 0)
	group := testcluster.UniqueName("g-procs")
	cfg := testConfig(c, group)
	col := newCollector()
	var kids []*child
	for _, name := range []string{"p1", "p2", "p3"} {
		kids = append(kids, startChild(t, col, childSpec{Name: name, Props: props(cfg), Topic: topic, Streams: 1}))
	}
	// Wait until the group owns all nine partitions before producing, so
	// that no rebalance happens while the messages are read.
	waitOwners(t, c, group, topic, 9, 3)
	ctx := testwait.Context(t, 3*time.Minute)
	_, err := c.Produce(ctx, topic, n, testcluster.ProduceOptions{Partition: -1, ValueSize: 64})
	require.NoError(t, err)
	rs := col.waitAll(t, 0, n, 2*time.Minute)
	require.Len(t, rs, n, "exactly once without rebalances")
	byProc := partitionsByConsumer(rs)
	require.Len(t, byProc, 3)
	seen := map[int32]string{}
	for proc, parts := range byProc {
		require.Len(t, parts, 3, "range gives each process 3 partitions: %v", byProc)
		for _, p := range parts {
			require.Empty(t, seen[p], "partition %d read by %s and %s", p, seen[p], proc)
			seen[p] = proc
		}
	}

	// p3 leaves, p4 joins; messages produced meanwhile are all read.
	kids[2].leave(t)
	_, err = c.Produce(ctx, topic, 500, testcluster.ProduceOptions{Partition: -1, FirstSeq: n, ValueSize: 64})
	require.NoError(t, err)
	startChild(t, col, childSpec{Name: "p4", Props: props(cfg), Topic: topic, Streams: 2})
	_, err = c.Produce(ctx, topic, 500, testcluster.ProduceOptions{Partition: -1, FirstSeq: n + 500, ValueSize: 64})
	require.NoError(t, err)
	col.waitAll(t, 0, n+1000, 2*time.Minute)
	waitOwners(t, c, group, topic, 9, 3)
}

// waitOwners waits until all partitions of topic have owner nodes and the
// group has the given number of members.
func waitOwners(t *testing.T, c *testcluster.Cluster, group, topic string, partitions, members int) {
	t.Helper()
	s, err := zksession.Dial(context.Background(), zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
	require.NoError(t, err)
	defer s.Close()
	require.Eventually(t, func() bool {
		ids, err := s.Children(context.Background(), zkutil.ConsumerIDsPath(group))
		if err != nil || len(ids) != members {
			return false
		}
		owners, err := s.Children(context.Background(), zkutil.OwnersTopicPath(group, topic))
		return err == nil && len(owners) == partitions
	}, 90*time.Second, 50*time.Millisecond, "group %s never owned all partitions with %d members", group, members)
}

// TestWildcardPicksUpNewTopic: a whitelist connector consumes a topic
// created after it started.
func TestWildcardPicksUpNewTopic(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	prefix := testcluster.UniqueName("wc")
	group := testcluster.UniqueName("g-wc")
	conn := newConnector(t, testConfig(c, group))
	ctx := testwait.Context(t, 3*time.Minute)
	streams, err := conn.CreateMessageStreamsByFilter(ctx, Whitelist(prefix+"-.*"), 2)
	require.NoError(t, err)
	col := newCollector()
	for _, s := range streams {
		col.read(ctx, "wc", s)
	}
	require.NoError(t, c.CreateTopic(ctx, prefix+"-late", 3, 1))
	_, err = c.Produce(ctx, prefix+"-late", 300, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)
	rs := col.waitAll(t, 0, 300, 2*time.Minute)
	require.Len(t, rs, 300)

	_, err = conn.CreateMessageStreamsByFilter(ctx, Whitelist("(?=x)"), 1)
	require.Error(t, err)
}

// TestKafkaOffsetStorage: offsets.storage=kafka commits through the group
// coordinator, dual commit writes both, and a restart resumes from them.
func TestKafkaOffsetStorage(t *testing.T) {
	c := testcluster.Shared(t)
	for _, dual := range []bool{false, true} {
		name := map[bool]string{false: "kafka", true: "dual"}[dual]
		t.Run(name, func(t *testing.T) {
			topic := newTopic(t, c, 3, 300)
			group := testcluster.UniqueName("g-" + name)
			cfg := testConfig(c, group)
			cfg.OffsetsStorage = OffsetsStorageKafka
			cfg.DualCommitEnabled = map[bool]DualCommit{false: DualCommitOff, true: DualCommitOn}[dual]
			ctx := testwait.Context(t, 3*time.Minute)
			conn, err := New(ctx, cfg)
			require.NoError(t, err)
			streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
			require.NoError(t, err)
			col := newCollector()
			col.read(ctx, "first", streams[topic][0])
			col.waitAll(t, 0, 300, 2*time.Minute)
			require.NoError(t, conn.Shutdown(ctx))
			col.wg.Wait()

			zkOffsets := readOffsets(t, c, group, topic, 3)
			if dual {
				require.Len(t, zkOffsets, 3, "dual commit writes ZooKeeper too")
			} else {
				require.Empty(t, zkOffsets, "kafka storage writes nothing to ZooKeeper")
			}
			kafkaOffsets := fetchKafkaOffsets(t, c, group, topic, 3)
			var total int64
			for _, off := range kafkaOffsets {
				total += off
			}
			require.Equal(t, int64(300), total, "committed to Kafka: %v", kafkaOffsets)

			_, err = c.Produce(ctx, topic, 30, testcluster.ProduceOptions{Partition: -1, FirstSeq: 300})
			require.NoError(t, err)
			conn2 := newConnector(t, cfg)
			streams, err = conn2.CreateMessageStreams(ctx, map[string]int{topic: 1})
			require.NoError(t, err)
			second := newCollector()
			second.read(ctx, "second", streams[topic][0])
			rs := second.waitAll(t, 300, 30, 2*time.Minute)
			require.Len(t, rs, 30, "resumed from the Kafka offsets")
		})
	}
}

// TestShutdownDuringRebalance: shutting down while members join and leave
// neither hangs nor leaks goroutines (TestMain checks leaks).
func TestShutdownDuringRebalance(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 8, 200)
	group := testcluster.UniqueName("g-shut")
	ctx := testwait.Context(t, 3*time.Minute)
	var conns []*ConsumerConnector
	for range 4 {
		conn, err := New(ctx, testConfig(c, group))
		require.NoError(t, err)
		_, err = conn.CreateMessageStreams(ctx, map[string]int{topic: 2})
		require.NoError(t, err)
		conns = append(conns, conn)
	}
	done := make(chan error, len(conns))
	for _, conn := range conns {
		go func() { done <- conn.Shutdown(ctx) }()
	}
	for range conns {
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(time.Minute):
			t.Fatal("Shutdown hung")
		}
	}
}

// TestNewFailsFastWithoutZooKeeper: an unreachable ZooKeeper gives a clear
// error within the connection timeout instead of a hang.
func TestNewFailsFastWithoutZooKeeper(t *testing.T) {
	cfg := DefaultConfig()
	cfg.GroupID = "g"
	cfg.ZooKeeperConnect = "127.0.0.1:1/kafka"
	cfg.ZooKeeperConnectionTimeout = 2 * time.Second
	start := time.Now()
	_, err := New(t.Context(), cfg)
	require.Error(t, err)
	require.True(t, errors.Is(err, zksession.ErrConnectionTimeout), "got %v", err)
	require.Less(t, time.Since(start), 10*time.Second)
}

// TestFailedFirstJoinLeavesNothing: in ZooKeeper mode, a
// CreateMessageStreams that cannot register (its context has ended)
// leaves no registration behind and may be called again, which joins and
// reads every message. (Before, the retry got ErrStreamsExist.)
func TestFailedFirstJoinLeavesNothing(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	const n = 40
	topic := newTopic(t, c, 2, n)
	group := testcluster.UniqueName("g-failedjoin")
	conn := newConnector(t, testConfig(c, group))
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := conn.CreateMessageStreams(ended, map[string]int{topic: 1})
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, conn.Assignment().Err, ErrNotJoined)

	s, err := zksession.Dial(context.Background(), zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Sync(context.Background(), zkutil.ConsumersPath))
	ids, err := s.Children(context.Background(), zkutil.ConsumerIDsPath(group))
	if !errors.Is(err, zksession.ErrNoNode) {
		require.NoError(t, err)
	}
	require.Empty(t, ids, "no registration stays")

	ctx := testwait.Context(t, 2*time.Minute)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col := newCollector()
	col.read(ctx, "c", streams[topic][0])
	col.waitAll(t, 0, n, time.Minute)
}

// TestNewEndsWithItsContext: New gives up when its context ends, long
// before the connection timeout, with the context's error and nothing left
// running (goleak).
func TestNewEndsWithItsContext(t *testing.T) {
	cfg := DefaultConfig()
	cfg.GroupID = "g"
	cfg.ZooKeeperConnect = "127.0.0.1:1/kafka"
	cfg.ZooKeeperConnectionTimeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	c, err := New(ctx, cfg)
	require.Nil(t, c)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, zksession.ErrConnectionTimeout)
	require.Less(t, time.Since(start), 30*time.Second, "New waited for the connection timeout")
}

// TestSessionExpiryIsReportedAndConsumptionResumes: when the ZooKeeper
// session expires, the application hears of it on Errors, the connector
// rejoins in a new session, and every message is still read.
func TestSessionExpiryIsReportedAndConsumptionResumes(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 4, 400)
	group := testcluster.UniqueName("g-expiry")
	tap := &testcluster.SessionTap{}
	conn := newConnector(t, testConfig(c, group), WithDialer(tap.DialerFor(c.ZKServers())))
	ctx := testwait.Context(t, 3*time.Minute)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 2})
	require.NoError(t, err)
	col := newCollector()
	for _, s := range streams[topic] {
		col.read(ctx, "c", s)
	}
	col.waitAll(t, 0, 400, 2*time.Minute)

	require.NoError(t, tap.Expire())
	select {
	case err := <-conn.Errors():
		require.ErrorIs(t, err, zkgroup.ErrOwnershipLost)
	case <-time.After(time.Minute):
		t.Fatal("the session loss was not reported")
	}
	waitOwners(t, c, group, topic, 4, 1)
	_, err = c.Produce(ctx, topic, 200, testcluster.ProduceOptions{Partition: -1, FirstSeq: 400})
	require.NoError(t, err)
	col.waitAll(t, 0, 600, 2*time.Minute)
}

// TestCommitOffsetsMap commits explicit offsets for owned partitions and
// refuses partitions this member does not own.
func TestCommitOffsetsMap(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 2, 0)
	group := testcluster.UniqueName("g-map")
	cfg := testConfig(c, group)
	cfg.AutoCommitEnable = false
	conn := newConnector(t, cfg)
	ctx := testwait.Context(t, 2*time.Minute)
	_, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	waitOwners(t, c, group, topic, 2, 1)

	p0 := zkutil.TopicPartition{Topic: topic, Partition: 0}
	other := zkutil.TopicPartition{Topic: topic + "-other", Partition: 0}
	err = conn.CommitOffsetsMap(ctx, map[zkutil.TopicPartition]int64{p0: 42, other: 7})
	require.ErrorIs(t, err, ErrNotOwner)
	require.Contains(t, err.Error(), other.String())
	require.Equal(t, map[int32]int64{0: 42}, readOffsets(t, c, group, topic, 2))

	require.NoError(t, conn.Shutdown(ctx))
	require.ErrorIs(t, conn.CommitOffsetsMap(ctx, map[zkutil.TopicPartition]int64{p0: 50}), ErrNotOwner, "nothing is owned after Shutdown")
	require.Equal(t, map[int32]int64{0: 42}, readOffsets(t, c, group, topic, 2))
}
