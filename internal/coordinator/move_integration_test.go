package coordinator

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestClientFollowsCoordinatorMove: the broker that coordinates the group
// dies (a private cluster of 3 brokers, Kafka 3.9 in ZooKeeper mode, with
// __consumer_offsets replicated three times); the Client's next commit
// fails against the lost connection, finds the coordinator again, and
// keeps trying (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE while the
// group's partition of __consumer_offsets moves) until the new
// coordinator takes it; a fetch then reads it from the new coordinator,
// with the Client's one connection now to another broker.
func TestClientFollowsCoordinatorMove(t *testing.T) {
	t.Parallel()
	c := testcluster.Private(t, testcluster.Options{Brokers: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	boot, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer boot.Close()
	ctrl, err := boot.Controller()
	require.NoError(t, err)
	var group string
	var coord int32
	for range 200 { // a group not coordinated by the controller, which stays up
		group = testcluster.UniqueName("move-g")
		b, err := boot.Coordinator(group)
		require.NoError(t, err)
		if coord = b.ID(); coord != ctrl.ID() {
			break
		}
	}
	require.NotEqual(t, ctrl.ID(), coord)
	topic := testcluster.UniqueName("move")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 3))
	tp := zkutil.TopicPartition{Topic: topic, Partition: 0}

	k := New(group, func() (sarama.Client, error) {
		cfg := c.ClientConfig()
		cfg.Metadata.Full = false
		cfg.Net.ReadTimeout = 5 * time.Second
		cfg.Net.DialTimeout = 2 * time.Second
		return sarama.NewClient(c.BrokerAddrs(), cfg)
	}, 300, 200*time.Millisecond)
	defer k.Close()
	require.NoError(t, k.Commit(ctx, map[zkutil.TopicPartition]int64{tp: 5}))
	k.mu.Lock()
	first := k.coord
	k.mu.Unlock()
	require.Equal(t, coord, first.id, "connected to the coordinator")

	require.NoError(t, c.KillBroker(int(coord)))
	start := time.Now()
	require.NoError(t, k.Commit(ctx, map[zkutil.TopicPartition]int64{tp: 9}), "the commit did not reach the new coordinator")
	t.Logf("the commit reached the new coordinator after %v", time.Since(start).Round(time.Millisecond))
	got, failed, err := k.Fetch(ctx, []zkutil.TopicPartition{tp})
	require.NoError(t, err)
	require.Empty(t, failed)
	require.Equal(t, int64(9), got[tp])
	k.mu.Lock()
	now := k.coord
	k.mu.Unlock()
	require.NotNil(t, now)
	require.NotEqual(t, coord, now.id, "the Client's connection is to the new coordinator")
}
