package testcluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// privateSlots bounds the private clusters this package's tests run at
// once: each is two to four JVMs on a machine of two cores, beside the
// tests that use the shared cluster.
var privateSlots = make(chan struct{}, 2)

// parallelPrivate marks t parallel and starts a private cluster for it once
// fewer than cap(privateSlots) other tests of this package hold one.
func parallelPrivate(t *testing.T, opts Options) *Cluster {
	t.Helper()
	t.Parallel()
	privateSlots <- struct{}{}
	t.Cleanup(func() { <-privateSlots }) // after the cluster's Stop
	return Private(t, opts)
}

// TestKillLeaderMovesLeadership kills the leader of a partition replicated
// three times with SIGKILL and checks that the controller elects another
// leader, then that the restarted broker registers and rejoins the ISR.
func TestKillLeaderMovesLeadership(t *testing.T) {
	c := parallelPrivate(t, Options{Brokers: 3})
	ctx := testwait.Context(t, 3*time.Minute)
	topic := UniqueName("harness-kill")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 3))
	_, err := c.Produce(ctx, topic, 10, ProduceOptions{Partition: 0})
	require.NoError(t, err)

	before, err := c.ReadPartitionState(ctx, topic, 0)
	require.NoError(t, err)
	require.Len(t, before.ISR, 3)
	victim := before.Leader
	t.Logf("partition 0 before: leader %d, epoch %d, isr %v", before.Leader, before.LeaderEpoch, before.ISR)

	require.NoError(t, c.KillBroker(victim))
	require.False(t, c.BrokerRunning(victim))
	var after PartitionState
	require.Eventually(t, func() bool {
		after, err = c.ReadPartitionState(ctx, topic, 0)
		return err == nil && after.Leader != victim && after.Leader >= 0
	}, 90*time.Second, 100*time.Millisecond, "leadership moves off the killed broker")
	require.Greater(t, after.LeaderEpoch, before.LeaderEpoch)
	require.NotContains(t, after.ISR, victim)
	t.Logf("partition 0 after kill -9 of broker %d: leader %d, epoch %d, isr %v", victim, after.Leader, after.LeaderEpoch, after.ISR)

	// The surviving replicas still serve the data.
	_, err = c.Produce(ctx, topic, 10, ProduceOptions{Partition: 0, FirstSeq: 10})
	require.NoError(t, err)

	require.NoError(t, c.RestartBroker(ctx, victim))
	ids, err := c.RegisteredBrokers(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 2}, ids)
	require.Eventually(t, func() bool {
		st, err := c.ReadPartitionState(ctx, topic, 0)
		return err == nil && len(st.ISR) == 3
	}, 90*time.Second, 100*time.Millisecond, "the restarted broker rejoins the ISR")
}
