package coordinator

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestCommitFromOutside: offsets committed from outside the group read back
// through OffsetFetch, a Java consumer (Kafka 3.9's console consumer) starts
// from them, and while it is a member the group is active and the
// coordinator refuses commits from outside.
func TestCommitFromOutside(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic, group := testcluster.UniqueName("kgroup"), testcluster.UniqueName("kgroup-g")
	require.NoError(t, c.CreateTopic(ctx, topic, 2, 1))
	_, err := c.Produce(ctx, topic, 20, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)

	k := New(group, func() (sarama.Client, error) {
		cfg := testcluster.SaramaConfig()
		cfg.Metadata.Full = false
		return sarama.NewClient(c.BrokerAddrs(), cfg)
	}, 5, 200*time.Millisecond)
	defer k.Close()
	st, err := k.Describe(ctx)
	require.NoError(t, err)
	assert.False(t, st.Active(), "an unknown group is not active: %+v", st)

	want := map[zkutil.TopicPartition]int64{{Topic: topic, Partition: 0}: 7, {Topic: topic, Partition: 1}: 4}
	require.NoError(t, k.Commit(ctx, want))
	got, failed, err := k.Fetch(ctx, []zkutil.TopicPartition{{Topic: topic, Partition: 0}, {Topic: topic, Partition: 1}, {Topic: topic, Partition: 2}})
	require.NoError(t, err)
	assert.Empty(t, failed)
	want[zkutil.TopicPartition{Topic: topic, Partition: 2}] = -1
	assert.Equal(t, want, got, "a partition without an offset has -1")

	// A Java consumer joins; while it is in the group, the group is active.
	joined := make(chan []testcluster.JavaRecord, 1)
	go func() {
		recs, err := testcluster.JavaConsoleConsume(ctx, c.BrokerAddrs()[0], topic, group, 8*time.Second)
		assert.NoError(t, err)
		joined <- recs
	}()
	require.Eventually(t, func() bool {
		st, err := k.Describe(ctx)
		return err == nil && st.Active() && len(st.Members) == 1
	}, time.Minute, 200*time.Millisecond, "the Java consumer never joined")
	err = k.Commit(ctx, map[zkutil.TopicPartition]int64{{Topic: topic, Partition: 0}: 0})
	require.ErrorIs(t, err, ErrGroupActive, "the coordinator refuses a commit from outside a live group")

	recs := <-joined
	seen := map[int32][]int64{}
	for _, r := range recs {
		seen[r.Partition] = append(seen[r.Partition], r.Offset)
	}
	assert.Equal(t, map[int32][]int64{0: {7, 8, 9}, 1: {4, 5, 6, 7, 8, 9}}, seen, "the Java consumer starts at the committed offsets")
}
