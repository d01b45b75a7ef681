package connector

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestCommitMessages: the commit of worker pools, in both coordination
// modes. Committing messages writes, per partition, the offset after the
// highest one given, and never less than what was committed; a message
// no stream of this member handed out, or one of a partition this member
// has lost to a rebalance since, is refused with ErrNotOwner and changes
// nothing; a message of a partition this member kept through a
// cooperative rebalance (ZooKeeper mode) is still committed.
func TestCommitMessages(t *testing.T) {
	t.Parallel()
	t.Run("zookeeper", func(t *testing.T) {
		c := testcluster.Shared(t)
		testCommitMessages(t, c, testConfig(c, testcluster.UniqueName("g-cm")), func(group, topic string) map[int32]int64 {
			return readOffsets(t, c, group, topic, 2)
		})
	})
	t.Run("kafka", func(t *testing.T) {
		c := testcluster.SharedKRaft(t)
		testCommitMessages(t, c, kafkaConfig(c, testcluster.UniqueName("g-cm")), func(group, topic string) map[int32]int64 {
			return kafkaCommitted(t, c, group, topic, 2)
		})
	})
}

func testCommitMessages(t *testing.T, c *testcluster.Cluster, cfg Config, committed func(group, topic string) map[int32]int64) {
	const n = 40
	topic := newTopic(t, c, 2, n)
	cfg.AutoCommitEnable = false
	ctx := testwait.Context(t, 3*time.Minute)
	first := newConnector(t, cfg)
	streams, err := first.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)

	byPartition := map[int32][]*Message{}
	for range n {
		m, err := streams[topic][0].Next(ctx)
		require.NoError(t, err)
		byPartition[m.Partition] = append(byPartition[m.Partition], m)
	}
	p0, p1 := byPartition[0], byPartition[1]
	require.GreaterOrEqual(t, len(p0), 6)
	require.GreaterOrEqual(t, len(p1), 6)
	require.Empty(t, committed(cfg.GroupID, topic), "nothing is committed before CommitMessages")

	require.NoError(t, first.CommitMessages(ctx, p0[5], p0[2], p1[3]))
	want := map[int32]int64{0: p0[5].Offset + 1, 1: p1[3].Offset + 1}
	require.Equal(t, want, committed(cfg.GroupID, topic))

	// A worker that finishes late does not move the commit back.
	require.NoError(t, first.CommitMessages(ctx, p0[1], p1[3]))
	require.Equal(t, want, committed(cfg.GroupID, topic))

	// A message no stream handed out.
	forged := &Message{Topic: topic, Partition: 0, Offset: p0[len(p0)-1].Offset + 100}
	require.ErrorIs(t, first.CommitMessages(ctx, forged), ErrNotOwner)
	require.Equal(t, want, committed(cfg.GroupID, topic))

	// A second member takes one partition.
	second := newConnector(t, cfg)
	_, err = second.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	var kept []int32
	require.Eventually(t, func() bool {
		a := first.Assignment()
		kept = a.Partitions[topic]
		return a.Err == nil && len(kept) == 1 && second.Assignment().Err == nil
	}, 2*time.Minute, 50*time.Millisecond, "the partitions were not shared")
	lost := int32(1 - kept[0])

	last := func(p int32) *Message { return byPartition[p][len(byPartition[p])-1] }
	err = first.CommitMessages(ctx, last(lost))
	require.ErrorIs(t, err, ErrNotOwner, "a message of a partition the member lost")
	require.Equal(t, want[lost], committed(cfg.GroupID, topic)[lost])

	err = first.CommitMessages(ctx, last(kept[0]))
	if cfg.kafkaMode() {
		// Kafka mode's rebalances are eager: the partition was revoked
		// and assigned again, and the message belongs to the ownership
		// before.
		require.ErrorIs(t, err, ErrNotOwner)
		return
	}
	require.NoError(t, err, "a message of a partition kept through the rebalance")
	want[kept[0]] = last(kept[0]).Offset + 1
	require.Equal(t, want[kept[0]], committed(cfg.GroupID, topic)[kept[0]])
}
