package connector

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestKafkaCooperativeKeptPartitionsFlow: in Kafka mode with
// partition.assignment.strategy=cooperative-sticky, a member keeps
// delivering the partitions it keeps through a rebalance, when a second
// member joins (the first gives two of its four partitions up) and when
// it leaves (the first gains them back). The first member's listener holds
// the rebalance for 2 s at the step that matters (while it gives
// partitions up, or before it starts those it gains), a producer writes
// every partition every 20 ms, and the kept partitions' deliveries are
// watched: they go on during the hold, and the longest pause between two
// of them from the event until the group is settled stays well under the
// hold. With range, the eager control, the member delivers nothing at all
// during the hold. The listener is told about the moved partitions only,
// the moved partitions end up delivered by their new owner alone, and no
// message is lost.
func TestKafkaCooperativeKeptPartitionsFlow(t *testing.T) {
	oneAtATime(t)
	c := testcluster.Shared(t)
	for _, event := range []string{"join", "leave"} {
		for _, strategy := range []AssignmentStrategy{StrategyCooperativeSticky, StrategyRange} {
			t.Run(event+"/"+strategy.String(), func(t *testing.T) { testKafkaKeptFlow(t, c, event, strategy) })
		}
	}
}

func testKafkaKeptFlow(t *testing.T, c *testcluster.Cluster, event string, strategy AssignmentStrategy) {
	ctx := testwait.Context(t, 4*time.Minute)
	topic := newTopic(t, c, 4, 0)
	stopTicks, err := startTicks(c, topic, 4, 20*time.Millisecond)
	require.NoError(t, err)
	stop := sync.OnceValues(stopTicks)
	defer func() { _, _ = stop() }()
	group := testcluster.UniqueName("g-kcoop")
	cfg := kafkaConfig(c, group)
	cfg.PartitionAssignmentStrategy = []AssignmentStrategy{strategy}
	cfg.AutoOffsetReset = AutoOffsetResetLargest
	cooperative := strategy == StrategyCooperativeSticky
	var log deliveryLog
	t.Cleanup(log.wg.Wait) // after the connectors' Shutdown, which ends the readers

	listener := newPausingListener(2 * time.Second)
	a := newConnector(t, cfg, WithRebalanceListener(listener))
	streams, err := a.CreateMessageStreams(ctx, map[string]int{topic: 2})
	require.NoError(t, err)
	for _, s := range streams[topic] {
		log.read(ctx, "a", s)
	}
	startB := func() *ConsumerConnector {
		b := newConnector(t, cfg)
		streams, err := b.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		log.read(ctx, "b", streams[topic][0])
		return b
	}
	owned := func(conn *ConsumerConnector) []int32 {
		got := conn.Assignment()
		if got.Err != nil {
			return nil
		}
		return got.Partitions[topic]
	}
	// Under cooperative-sticky the first member keeps 0 and 1 (of what
	// it owns, Java's assignor keeps the lowest partition numbers).
	kept, moved := []int32{0, 1}, []int32{2, 3}
	var b *ConsumerConnector
	var event0 time.Time
	if event == "join" {
		require.Eventually(t, func() bool { return slices.Equal(owned(a), []int32{0, 1, 2, 3}) }, time.Minute, 20*time.Millisecond)
		listener.arm("release")
		event0 = time.Now()
		b = startB()
	} else {
		b = startB()
		waitGroup(t, c, group, topic, 4, 2)
		if !cooperative {
			kept = owned(a) // range: whatever the member ids give a
			moved = owned(b)
		}
		require.Eventually(t, func() bool { return slices.Equal(owned(a), kept) }, time.Minute, 20*time.Millisecond)
		require.Eventually(t, func() bool { return slices.Equal(owned(b), moved) }, time.Minute, 20*time.Millisecond)
		listener.arm("start")
		event0 = time.Now()
		require.NoError(t, b.Shutdown(ctx))
	}
	var pause [2]time.Time
	select {
	case pause = <-listener.pauses:
	case <-ctx.Done():
		t.Fatal("the listener was never called at the step that holds the rebalance")
	}
	members := 2
	if event == "leave" {
		members = 1
	}
	waitGroup(t, c, group, topic, 4, members)
	require.Eventually(t, func() bool {
		return len(owned(a)) == map[string]int{"join": 2, "leave": 4}[event]
	}, time.Minute, 20*time.Millisecond)
	if !cooperative && event == "join" {
		// range: whatever the member ids give each.
		kept, moved = owned(a), owned(b)
	}
	settled := time.Now().Add(time.Second)
	time.Sleep(time.Until(settled))

	// Leave the first and last moments of the hold out: the kept
	// partitions must flow in the middle of it.
	during := log.count("a", kept, pause[0].Add(300*time.Millisecond), pause[1].Add(-100*time.Millisecond))
	all := log.count("a", []int32{0, 1, 2, 3}, pause[0].Add(300*time.Millisecond), pause[1].Add(-100*time.Millisecond))
	gap := log.longestPause("a", kept, event0, settled)
	t.Logf("%s, %s: during the %v hold A delivered %d messages of its kept partitions %v (%d in all); longest pause of the kept partitions from the event until settled: %v",
		event, strategy, pause[1].Sub(pause[0]).Round(time.Millisecond), during, kept, all, gap.Round(time.Millisecond))
	if !cooperative {
		require.Zero(t, all, "eager: the member delivered while it was rebalancing")
		require.GreaterOrEqual(t, gap, 1900*time.Millisecond, "eager: the kept partitions did not stop for the hold")
	} else {
		// About 160 unloaded (two partitions, every 20 ms, 1.6 s).
		require.GreaterOrEqual(t, during, 5, "cooperative: the kept partitions did not flow during the rebalance")
		require.Less(t, gap, 1500*time.Millisecond, "cooperative: the kept partitions stopped during the rebalance")
		listener.mu.Lock()
		released, started := slices.Clone(listener.released), slices.Clone(listener.started)
		listener.mu.Unlock()
		for _, rel := range released {
			for _, p := range kept {
				require.NotContains(t, rel[topic], p, "the listener was told about a kept partition: %v", released)
			}
		}
		for i, assigned := range started[1:] {
			for _, p := range kept {
				require.NotContains(t, assigned[topic], p, "start %d told about a kept partition: %v", i+1, started)
			}
		}
	}

	// The moved partitions are delivered by their new owner alone.
	owner, other := "b", "a"
	if event == "leave" {
		owner, other = "a", "b"
	}
	require.Eventually(t, func() bool {
		now := time.Now()
		return log.count(owner, moved, now.Add(-time.Second), now) > 20 && log.count(other, moved, now.Add(-time.Second), now) == 0
	}, time.Minute, 50*time.Millisecond, "partitions %v not delivered by %s alone", moved, owner)
	_, err = stop()
	require.NoError(t, err)
	time.Sleep(500 * time.Millisecond) // the last ticks reach the readers
	require.Empty(t, log.gaps(), "messages lost")
	if event == "join" {
		require.NoError(t, b.Shutdown(ctx))
	}
	require.NoError(t, a.Shutdown(ctx))
}

// longestPause returns the longest time between from, the deliveries of
// member's partitions ps within (from, to), and to.
func (l *deliveryLog) longestPause(member string, ps []int32, from, to time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ats []time.Time
	for _, d := range l.seen {
		if d.member == member && slices.Contains(ps, d.partition) && d.at.After(from) && d.at.Before(to) {
			ats = append(ats, d.at)
		}
	}
	slices.SortFunc(ats, func(a, b time.Time) int { return a.Compare(b) })
	longest, last := time.Duration(0), from
	for _, at := range append(ats, to) {
		longest = max(longest, at.Sub(last))
		last = at
	}
	return longest
}
