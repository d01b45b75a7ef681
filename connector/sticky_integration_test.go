package connector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ownersNow returns partition -> member name of the partitions of topic the
// members own now, and whether they own every partition once, balanced
// (counts within one) over the members that are named.
func ownersNow(topic string, partitions int, members map[string]*ConsumerConnector) (map[int32]string, bool) {
	owners := map[int32]string{}
	lo, hi := partitions, 0
	for name, m := range members {
		a := m.Assignment()
		if a.Err != nil {
			return nil, false
		}
		ps := a.Partitions[topic]
		lo, hi = min(lo, len(ps)), max(hi, len(ps))
		for _, p := range ps {
			if _, dup := owners[p]; dup {
				return nil, false
			}
			owners[p] = name
		}
	}
	return owners, len(owners) == partitions && hi-lo <= 1
}

// awaitBalanced waits until members own topic's partitions once, balanced.
func awaitBalanced(t *testing.T, topic string, partitions int, members map[string]*ConsumerConnector) map[int32]string {
	t.Helper()
	var owners map[int32]string
	require.Eventually(t, func() bool {
		var ok bool
		owners, ok = ownersNow(topic, partitions, members)
		return ok
	}, 2*time.Minute, 20*time.Millisecond, "the members %v never owned the %d partitions once, balanced", slices.Sorted(maps.Keys(members)), partitions)
	return owners
}

// movedBetween lists the partitions whose owner differs.
func movedBetween(before, after map[int32]string) []int32 {
	var out []int32
	for p, o := range after {
		if before[p] != o {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// TestStickyGroupMovesOnlyWhatBalanceNeeds: three connectors running the
// sticky strategy read every message of a 12-partition topic, each message
// once per member that owned its partition; a fourth member joins and
// takes exactly 3 partitions from the others (range would move 9 of 12
// here: the newcomer's id sorts first); it leaves gracefully and exactly
// its 3 partitions move back; the messages produced meanwhile are all
// read.
func TestStickyGroupMovesOnlyWhatBalanceNeeds(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 5*time.Minute)
	const partitions, n = 12, 600
	topic := newTopic(t, c, partitions, n)
	group := testcluster.UniqueName("g-sticky")
	col := newCollector()
	members := map[string]*ConsumerConnector{}
	start := func(name string) *ConsumerConnector {
		cfg := testConfig(c, group)
		cfg.PartitionAssignmentStrategy = []AssignmentStrategy{StrategySticky}
		cfg.ConsumerID = name + "-" + group
		conn, err := New(ctx, cfg)
		require.NoError(t, err)
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = conn.Shutdown(sctx)
		})
		streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		col.read(ctx, name, streams[topic][0])
		return conn
	}
	for _, name := range []string{"b", "c", "d"} {
		members[name] = start(name)
	}
	before := awaitBalanced(t, topic, partitions, members)
	col.waitAll(t, 0, n, 2*time.Minute)

	// "a" sorts first: under range every member's range would shift.
	members["a"] = start("a")
	joined := awaitBalanced(t, topic, partitions, members)
	moved := movedBetween(before, joined)
	t.Logf("join: moved %v", moved)
	require.Len(t, moved, 3, "a join of a 4th member moves 3 of 12 partitions: %v -> %v", before, joined)
	for _, p := range moved {
		require.Equal(t, "a", joined[p], "partition %d moved to another member than the newcomer", p)
	}
	produce(t, c, topic, n, n)
	col.waitAll(t, n, n, 2*time.Minute)

	leaver := members["a"]
	delete(members, "a")
	require.NoError(t, leaver.Shutdown(ctx))
	left := awaitBalanced(t, topic, partitions, members)
	moved = movedBetween(joined, left)
	t.Logf("leave: moved %v", moved)
	require.Len(t, moved, 3, "the leaver's partitions only: %v -> %v", joined, left)
	for _, p := range moved {
		require.Equal(t, "a", joined[p], "partition %d, not the leaver's, moved", p)
	}
	produce(t, c, topic, 2*n, n)
	rs := col.waitAll(t, 2*n, n, 2*time.Minute)

	// Each member read each message of its partitions once.
	seen := map[string]int{}
	for _, r := range rs {
		seen[fmt.Sprintf("%s/%d/%d", r.Consumer, r.Partition, r.Offset)]++
	}
	for k, times := range seen {
		require.Equal(t, 1, times, "%s read %d times by one member", k, times)
	}
	checkOrder(t, rs)
	col.mu.Lock()
	require.Empty(t, col.errs)
	col.mu.Unlock()
}

// produce writes n more messages to topic, numbered from first.
func produce(t *testing.T, c *testcluster.Cluster, topic string, first, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := c.Produce(ctx, topic, n, testcluster.ProduceOptions{Partition: -1, ValueSize: 64, FirstSeq: first})
	require.NoError(t, err)
}

// TestStickyAndRangeRefuseToMix: a member that joins a group running
// another strategy (sticky then range, range then sticky) stays out: it
// owns nothing, its registration is deleted, Assignment().Err and Errors
// carry a StrategyError naming both members and strategies; the member
// that was there first keeps every partition (it never sees the newcomer,
// which checks the registrations before it registers); once the first member leaves, the newcomer joins and takes everything.
func TestStickyAndRangeRefuseToMix(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer, err := zksession.Dial(context.Background(), zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
	require.NoError(t, err)
	defer observer.Close()
	for _, order := range [][2]AssignmentStrategy{{StrategySticky, StrategyRange}, {StrategyRange, StrategySticky}} {
		t.Run(order[0].String()+" then "+order[1].String(), func(t *testing.T) {
			ctx := testwait.Context(t, 3*time.Minute)
			const partitions = 4
			topic := newTopic(t, c, partitions, 0)
			group := testcluster.UniqueName("g-mix")
			start := func(name string, strategy AssignmentStrategy) *ConsumerConnector {
				cfg := testConfig(c, group)
				cfg.PartitionAssignmentStrategy = []AssignmentStrategy{strategy}
				cfg.ConsumerID = name
				conn := newConnector(t, cfg)
				_, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
				require.NoError(t, err)
				return conn
			}
			first := start("first", order[0])
			awaitBalanced(t, topic, partitions, map[string]*ConsumerConnector{"first": first})
			second := start("second", order[1])

			var refused *StrategyError
			require.Eventually(t, func() bool {
				return errors.As(second.Assignment().Err, &refused)
			}, time.Minute, 20*time.Millisecond, "the newcomer never said why it owns nothing")
			err := second.Assignment().Err
			require.ErrorIs(t, err, ErrRebalanceFailed)
			require.ErrorIs(t, err, ErrInconsistentStrategy)
			require.Equal(t, group+"_second", refused.Member)
			require.Equal(t, order[1].String(), refused.Strategy)
			require.Equal(t, []MemberStrategy{{ID: group + "_first", Strategy: order[0].String()}}, refused.Conflicts)
			for _, want := range []string{group + "_second", group + "_first", `"` + order[0].String() + `"`, `"` + order[1].String() + `"`, "the sticky strategy needs"} {
				require.Contains(t, err.Error(), want)
			}
			t.Logf("the newcomer: %v", err)
			requireReported(t, second, group+"_second")

			ids, err := observer.Children(ctx, zkutil.ConsumerIDsPath(group))
			require.NoError(t, err)
			require.Equal(t, []string{group + "_first"}, ids, "the member that stays out is not registered")
			owners, ok := ownersNow(topic, partitions, map[string]*ConsumerConnector{"first": first})
			require.True(t, ok, "the first member keeps every partition: %v", owners)

			require.NoError(t, first.Shutdown(ctx))
			awaitBalanced(t, topic, partitions, map[string]*ConsumerConnector{"second": second})
		})
	}
}

// requireReported waits for a StrategyError about member on conn's Errors.
func requireReported(t *testing.T, conn *ConsumerConnector, member string) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case err := <-conn.Errors():
			var e *StrategyError
			if errors.As(err, &e) && e.Member == member && strings.Contains(err.Error(), member) {
				return
			}
		case <-timeout:
			t.Fatalf("no StrategyError about %s reported on Errors", member)
		}
	}
}
