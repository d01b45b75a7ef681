package connector

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/kafkagroup"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestKafkaModeStaticReplacementNeverOverlaps: a second member with the
// same group.instance.id replaces the first while a producer writes every
// partition all the time. The coordinator gives the second the
// partitions at once and the first learns it was fenced only at its next
// heartbeat (2 s here) or commit; still no partition is handed out by
// both: per partition, the first's last delivery comes before the
// second's first one (before the second waited for the first's lease, they
// overlapped by up to a heartbeat interval, 1.8 s measured). Nothing is
// lost.
func TestKafkaModeStaticReplacementNeverOverlaps(t *testing.T) {
	t.Parallel()
	bothClusters(t, func(t *testing.T, c *testcluster.Cluster) {
		const partitions = 4
		topic := newTopic(t, c, partitions, 0)
		cfg := kafkaConfig(c, testcluster.UniqueName("g-replace"))
		cfg.GroupInstanceID = "instance-1"
		cfg.HeartbeatInterval = 2 * time.Second
		cfg.AutoCommitInterval = time.Second
		ctx := testwait.Context(t, 3*time.Minute)

		stop := make(chan struct{})
		var once sync.Once
		stopProducing := func() { once.Do(func() { close(stop) }) }
		defer stopProducing()
		produced := produceWhile(t, c, topic, 0, 2*partitions, 20*time.Millisecond, stop)

		col := newCollector()
		a := newConnector(t, cfg)
		sa, err := a.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		col.read(ctx, "a", sa[topic][0])
		waitDelivering(t, col, "a", partitions)

		b := newConnector(t, cfg)
		sb, err := b.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		joined := time.Now()
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
				t.Fatal("the replaced member got no fatal error")
			}
		}
		waitDelivering(t, col, "b", partitions)
		time.Sleep(time.Second)
		stopProducing()
		n := <-produced
		rs := col.waitAll(t, 0, n, 2*time.Minute)

		last := map[int32]time.Time{}  // a's last delivery per partition
		first := map[int32]time.Time{} // b's first
		for _, r := range rs {
			switch r.Consumer {
			case "a":
				if r.At.After(last[r.Partition]) {
					last[r.Partition] = r.At
				}
			case "b":
				if f, ok := first[r.Partition]; !ok || r.At.Before(f) {
					first[r.Partition] = r.At
				}
			}
		}
		require.Len(t, first, partitions, "the second member read every partition")
		for p := range int32(partitions) {
			require.False(t, last[p].IsZero(), "the first member read partition %d", p)
			t.Logf("partition %d: a's last delivery %v after b joined, b's first %v after b joined (gap %v)", p,
				last[p].Sub(joined).Round(time.Millisecond), first[p].Sub(joined).Round(time.Millisecond),
				first[p].Sub(last[p]).Round(time.Millisecond))
			require.True(t, last[p].Before(first[p]),
				"partition %d was handed out by both members for %v", p, last[p].Sub(first[p]).Round(time.Millisecond))
		}
	})
}

// waitDelivering waits until consumer has read from each of partitions.
func waitDelivering(t *testing.T, col *collector, consumer string, partitions int) {
	t.Helper()
	require.Eventually(t, func() bool {
		seen := map[int32]bool{}
		for _, r := range col.snapshot() {
			if r.Consumer == consumer {
				seen[r.Partition] = true
			}
		}
		return len(seen) == partitions
	}, time.Minute, 20*time.Millisecond, "%s never read every partition", consumer)
}
