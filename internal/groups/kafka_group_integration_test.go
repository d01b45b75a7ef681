package groups

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testcluster"
)

// TestKafkaGroupCommitsFromOutside: offsets committed from outside the
// group read back through OffsetFetch, a Java consumer (Kafka 3.9's
// console consumer) starts from them, and while it is a member the
// coordinator refuses commits from outside and Migrate refuses to run.
func TestKafkaGroupCommitsFromOutside(t *testing.T) {
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic, group := testcluster.UniqueName("kgroup"), testcluster.UniqueName("kgroup-g")
	require.NoError(t, c.CreateTopic(ctx, topic, 2, 1))
	_, err := c.Produce(ctx, topic, 20, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)

	k, err := DialKafkaGroup(ctx, c.BrokerAddrs(), group, 10*time.Second)
	require.NoError(t, err)
	defer k.Close()
	st, err := k.State(ctx)
	require.NoError(t, err)
	assert.False(t, st.Active(), "an unknown group is not active: %+v", st)

	want := map[TopicPartition]int64{{topic, 0}: 7, {topic, 1}: 4}
	require.NoError(t, k.Commit(ctx, want))
	got, err := k.Offsets(ctx, []TopicPartition{{topic, 0}, {topic, 1}, {topic, 2}})
	require.NoError(t, err)
	assert.Equal(t, want, got, "a partition without an offset is absent")

	// A Java consumer joins; while it is in the group, the group is active.
	joined := make(chan []testcluster.JavaRecord, 1)
	go func() {
		recs, err := testcluster.JavaConsoleConsume(ctx, c.BrokerAddrs()[0], topic, group, 8*time.Second)
		assert.NoError(t, err)
		joined <- recs
	}()
	require.Eventually(t, func() bool {
		st, err := k.State(ctx)
		return err == nil && st.Active() && len(st.Members) == 1
	}, time.Minute, 200*time.Millisecond, "the Java consumer never joined")
	err = k.Commit(ctx, map[TopicPartition]int64{{topic, 0}: 0})
	require.ErrorIs(t, err, ErrKafkaGroupActive, "the coordinator refuses a commit from outside a live group")
	_, err = Migrate(ctx, k, map[TopicPartition]int64{{topic, 0}: 0}, nil, true)
	require.ErrorIs(t, err, ErrKafkaGroupActive)

	recs := <-joined
	seen := map[int32][]int64{}
	for _, r := range recs {
		seen[r.Partition] = append(seen[r.Partition], r.Offset)
	}
	assert.Equal(t, map[int32][]int64{0: {7, 8, 9}, 1: {4, 5, 6, 7, 8, 9}}, seen, "the Java consumer starts at the committed offsets")
}
