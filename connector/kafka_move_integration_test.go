package connector

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestMoveOffZooKeeper is the end-to-end move: a group consuming through
// ZooKeeper with offsets.storage=kafka and dual.commit.enabled stops; the
// same properties, plus zkconsumer.group.coordination=kafka and
// bootstrap.servers, start it again on Kafka's group coordinator, which
// resumes from the committed offsets: nothing lost, nothing read twice.
func TestMoveOffZooKeeper(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 4, 200)
	group := testcluster.UniqueName("g-move")
	zkCfg := testConfig(c, group)
	zkCfg.OffsetsStorage = OffsetsStorageKafka
	zkCfg.DualCommitEnabled = DualCommitOn
	ctx := testwait.Context(t, 3*time.Minute)
	col := newCollector()
	var old []*ConsumerConnector
	for range 2 {
		conn, err := New(ctx, zkCfg)
		require.NoError(t, err)
		streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		col.read(ctx, "zk", streams[topic][0])
		old = append(old, conn)
	}
	waitOwners(t, c, group, topic, 4, 2)
	_, err := c.Produce(ctx, topic, 100, testcluster.ProduceOptions{Partition: -1, FirstSeq: 200})
	require.NoError(t, err)
	col.waitAll(t, 0, 300, time.Minute)
	for _, conn := range old {
		shutdown(t, conn)
	}
	col.wg.Wait()
	require.Equal(t, readOffsets(t, c, group, topic, 4), kafkaCommitted(t, c, group, topic, 4), "dual commit wrote both stores")

	// Meanwhile the producers go on.
	_, err = c.Produce(ctx, topic, 100, testcluster.ProduceOptions{Partition: -1, FirstSeq: 300})
	require.NoError(t, err)

	props := zkCfg.Properties()
	props["zkconsumer.group.coordination"] = "kafka"
	props["bootstrap.servers"] = strings.Join(c.BrokerAddrs(), ",")
	props["session.timeout.ms"] = "6000"
	props["heartbeat.interval.ms"] = "300"
	cfg, warnings, err := ConfigFromProperties(props)
	require.NoError(t, err)
	require.Contains(t, strings.Join(warnings, "\n"), "property zookeeper.connect is ignored with zkconsumer.group.coordination=kafka")
	moved := newCollector()
	for range 2 {
		conn := newConnector(t, cfg)
		streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		moved.read(ctx, "kafka", streams[topic][0])
	}
	waitGroup(t, c, group, topic, 4, 2)
	rs := moved.waitAll(t, 300, 100, time.Minute)
	t.Logf("committed before the move: %v; read after it: %d messages", kafkaCommitted(t, c, group, topic, 4), len(rs))
	for seq, n := range distinct(rs) {
		require.GreaterOrEqual(t, seq, 300, "message %d, consumed through ZooKeeper, was read again", seq)
		require.Equal(t, 1, n, "message %d read %d times", seq, n)
	}
}

// TestKafkaModeFrozenMemberDeliversNothingOfLostPartitions freezes a
// Kafka-coordinated member process (SIGSTOP) past its session timeout,
// long enough for the coordinator to give its partitions to a peer. Woken
// (SIGCONT), it must not hand out a single message of those partitions:
// its lease counts from heartbeats sent before the freeze, whatever
// answers wait in its sockets. It rejoins and the group converges.
func TestKafkaModeFrozenMemberDeliversNothingOfLostPartitions(t *testing.T) {
	oneAtATime(t)
	c := testcluster.SharedKRaft(t)
	topic := newTopic(t, c, 4, 200)
	group := testcluster.UniqueName("g-kfrozen")
	cfg := kafkaConfig(c, group) // 6 s session
	deferred := frozenMember(t, c, cfg, topic,
		func(members int) { waitGroup(t, c, group, topic, 4, members) },
		func() {
			waitGroup(t, c, group, topic, 4, 1) // the coordinator removed the frozen member
			time.Sleep(time.Second)
		})
	require.Len(t, deferred, 4, "the peer took every partition over")
}

// TestKafkaModeStalledReaderLeavesGroup: a stream whose reader stops
// reading for max.poll.interval.ms while messages wait makes the member
// commit and leave the group, as Java's consumer does; the other member
// takes everything over at once, and the stalled member joins again when
// its reader comes back.
func TestKafkaModeStalledReaderLeavesGroup(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 2, 100)
	group := testcluster.UniqueName("g-stall")
	cfg := kafkaConfig(c, group)
	cfg.MaxPollInterval = 3 * time.Second
	ctx := testwait.Context(t, 3*time.Minute)
	a := newConnector(t, cfg)
	sa, err := a.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	first, err := sa[topic][0].Next(ctx) // then the reader stalls
	require.NoError(t, err)
	col := newCollector()
	b := newConnector(t, cfg)
	sb, err := b.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col.read(ctx, "b", sb[topic][0])

	select {
	case err := <-a.Errors():
		require.ErrorIs(t, err, ErrMaxPollIntervalExceeded)
	case <-time.After(30 * time.Second):
		t.Fatal("the stalled member did not report leaving")
	}
	ms := waitGroup(t, c, group, topic, 2, 1)
	require.Len(t, ms[0].partitions[topic], 2)
	rs := col.waitAll(t, 0, 100, time.Minute)
	for seq, n := range distinct(rs) {
		require.Equal(t, 1, n, "message %d", seq)
	}
	t.Logf("the stalled member had handed out offset %d of partition %d; the other member read %d messages", first.Offset, first.Partition, len(rs))

	// The reader comes back: the member rejoins.
	col.read(ctx, "a", sa[topic][0])
	waitGroup(t, c, group, topic, 2, 2)
	_, err = c.Produce(ctx, topic, 50, testcluster.ProduceOptions{Partition: -1, FirstSeq: 100})
	require.NoError(t, err)
	col.waitAll(t, 100, 50, time.Minute)
}
