package zkgroup

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

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// stickyNode reads the group's sticky_assignment node as owner values.
func stickyNode(ctx context.Context, s *zksession.Session, group string) (*stickyRecord, map[zkutil.TopicPartition]string, error) {
	data, _, err := s.Get(ctx, stickyPath(group))
	if err != nil {
		return nil, nil, err
	}
	rec, owners, err := decodeSticky(stickyPath(group), data)
	if err != nil {
		return nil, nil, err
	}
	out := map[zkutil.TopicPartition]string{}
	for tp, th := range owners {
		out[tp] = th.String()
	}
	return rec, out, nil
}

// TestStickyMembersAgreeThroughZooKeeper: three sticky members, each
// computing from what it reads in ZooKeeper, end with the same assignment:
// the owner nodes, every member's Generation().Assignment and the group's
// sticky_assignment node agree, and the node's fingerprint is that of the
// group as an observer reads it. A member that joins, then one that leaves,
// move only what balance needs.
func TestStickyMembersAgreeThroughZooKeeper(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topicA, topicB := newTopic(t, c, 9), newTopic(t, c, 4)
	topics := map[string]int{topicA: 1, topicB: 1}
	group := testcluster.UniqueName("g-sticky")
	ctx := context.Background()
	members := map[string]*testMember{}
	for _, name := range []string{"b", "c", "d"} {
		members[name] = startMember(t, c, group, group+"_"+name, memberOpts{strategy: strategyname.Sticky, topics: topics})
	}
	agreed := func() map[zkutil.TopicPartition]string {
		t.Helper()
		var last string
		var owners map[zkutil.TopicPartition]string
		ok := testwait.Until(90*time.Second, func() bool {
			rec, node, err := stickyNode(ctx, observer, group)
			if err != nil {
				last = err.Error()
				return false
			}
			owners, err = ownersOf(ctx, observer, group, slices.Collect(maps.Keys(topics)))
			if err != nil || !maps.Equal(owners, node) || len(owners) != 13 {
				last = fmt.Sprintf("owners %v, node %v, err %v", owners, node, err)
				return false
			}
			view, err := readGroup(ctx, observer, group, members["b"].id, StaticSubscription(topics), true, strategyname.Sticky)
			if err != nil {
				last = err.Error()
				return false
			}
			if len(view.ctx.Consumers) != len(members) {
				last = fmt.Sprintf("members %v", view.ctx.Consumers)
				return false
			}
			if fp, _ := zkassign.Fingerprint(view.ctx); fp != rec.Fingerprint {
				last = "the node's fingerprint is not the group's"
				return false
			}
			for name, m := range members {
				gen := m.Generation()
				if gen == nil {
					last = name + " has no generation"
					return false
				}
				computed := map[zkutil.TopicPartition]string{}
				for tp, th := range gen.Assignment.Flatten() {
					computed[tp] = th.String()
				}
				if !maps.Equal(computed, node) {
					last = fmt.Sprintf("member %s computed %v, the node holds %v", name, computed, node)
					return false
				}
			}
			return true
		})
		require.True(t, ok, "the sticky group did not agree: %s", last)
		return owners
	}
	countsOf := func(owners map[zkutil.TopicPartition]string) map[string]int {
		out := map[string]int{}
		for _, o := range owners {
			out[o]++
		}
		return out
	}
	before := agreed()
	t.Logf("three members: %v", countsOf(before))

	members["a"] = startMember(t, c, group, group+"_a", memberOpts{strategy: strategyname.Sticky, topics: topics})
	joined := agreed()
	moved := 0
	for tp, o := range joined {
		if before[tp] != o {
			moved++
			require.True(t, strings.HasPrefix(o, group+"_a-"), "%s moved to %s, not to the newcomer", tp, o)
		}
	}
	require.Equal(t, 3, moved, "13 partitions over 4 threads: the newcomer takes 3, nothing else moves: %v", countsOf(joined))

	members["a"].stop(t)
	delete(members, "a")
	left := agreed()
	for tp, o := range left {
		if joined[tp] != o {
			require.True(t, strings.HasPrefix(joined[tp], group+"_a-"), "%s, not the leaver's, moved", tp)
		}
	}
}

// TestScalaMemberMakesStickyMembersStepOut: a Kafka 1.1.1 Scala consumer,
// which records no strategy and cannot be told to leave, joins a sticky
// group: the sticky member reports a StrategyError naming it, releases its
// partitions and deletes its registration, so that the Scala consumer owns
// every partition; once the Scala consumer is gone, the sticky member
// joins again and owns everything.
func TestScalaMemberMakesStickyMembersStepOut(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 4)
	topics := map[string]int{topic: 1}
	group := testcluster.UniqueName("g-sticky-scala")
	m := startMember(t, c, group, group+"_go", memberOpts{strategy: strategyname.Sticky, topics: topics})
	require.True(t, testwait.Until(time.Minute, func() bool { return len(m.rec.snapshot()) == 4 }), "the sticky member owns everything")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, err := testcluster.OldTool(ctx, "kafka.tools.ConsumerPerformance", "--zookeeper", c.ZKConnect(), "--group", group,
		"--topic", topic, "--threads", "1", "--messages", "1000000")
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	stopped := false
	stopScala := func() {
		if !stopped {
			stopped = true
			cancel()
			_ = cmd.Wait()
		}
	}
	defer stopScala()

	var refused *StrategyError
	deadline := time.After(2 * time.Minute)
	for refused == nil {
		select {
		case err := <-m.errs:
			if errors.As(err, &refused) {
				require.ErrorIs(t, err, ErrRebalanceFailed)
			}
		case <-deadline:
			t.Fatal("the sticky member never reported the Scala member")
		}
	}
	t.Logf("sticky member: %v", refused)
	require.Equal(t, group+"_go", refused.Member)
	require.Len(t, refused.Conflicts, 1)
	require.Empty(t, refused.Conflicts[0].Strategy)
	require.Contains(t, refused.Error(), "Kafka's Scala consumer")
	scalaID := refused.Conflicts[0].ID

	require.True(t, testwait.Until(time.Minute, func() bool {
		owners, err := ownersOf(context.Background(), observer, group, []string{topic})
		if err != nil || len(owners) != 4 {
			return false
		}
		for _, o := range owners {
			if !strings.HasPrefix(o, scalaID+"-") {
				return false
			}
		}
		ids, err := observer.Children(context.Background(), zkutil.ConsumerIDsPath(group))
		return err == nil && slices.Equal(ids, []string{scalaID})
	}), "the Scala consumer owns every partition and is the only member")
	require.Empty(t, m.rec.snapshot())

	stopScala()
	require.True(t, testwait.Until(2*time.Minute, func() bool { return len(m.rec.snapshot()) == 4 }), "the sticky member joins again once the Scala member is gone")
}
