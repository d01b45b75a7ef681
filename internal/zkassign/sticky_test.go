package zkassign

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// moves counts the partitions of after whose thread is not the one they had
// in before (partitions new in after do not count).
func moves(before, after map[zkutil.TopicPartition]zkutil.ConsumerThreadID) int {
	n := 0
	for tp, th := range after {
		if prev, ok := before[tp]; ok && prev != th {
			n++
		}
	}
	return n
}

// stillConsuming returns the entries of prev whose thread still consumes
// the partition's topic in ctx.
func stillConsuming(ctx AssignmentContext, prev map[zkutil.TopicPartition]zkutil.ConsumerThreadID) map[zkutil.TopicPartition]zkutil.ConsumerThreadID {
	out := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for tp, th := range prev {
		if slices.Contains(ctx.ConsumersForTopic[tp.Topic], th) {
			out[tp] = th
		}
	}
	return out
}

// randomPrevious is a random earlier assignment of ctx's partitions: each
// goes to a random thread of the group (not necessarily one consuming its
// topic), to a thread of a member that has left, or to nobody.
func randomPrevious(rng *rand.Rand, ctx AssignmentContext) map[zkutil.TopicPartition]zkutil.ConsumerThreadID {
	var all []zkutil.ConsumerThreadID
	for _, t := range slices.Sorted(maps.Keys(ctx.ConsumersForTopic)) {
		all = append(all, ctx.ConsumersForTopic[t]...)
	}
	prev := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for _, t := range slices.Sorted(maps.Keys(ctx.PartitionsForTopic)) {
		for _, p := range ctx.PartitionsForTopic[t] {
			tp := zkutil.TopicPartition{Topic: t, Partition: p}
			switch k := rng.IntN(10); {
			case k == 0:
			case k == 1:
				prev[tp] = th("gone_member", rng.IntN(3))
			case len(all) > 0 && k < 4:
				prev[tp] = all[rng.IntN(len(all))]
			default:
				if ths := ctx.ConsumersForTopic[t]; len(ths) > 0 {
					prev[tp] = ths[rng.IntN(len(ths))]
				}
			}
		}
	}
	return prev
}

// leastMoves is the fewest partitions any balanced assignment of ctx (all
// threads within one of each other, identical subscriptions) must take away
// from a thread that owned them in prev and still consumes their topic:
// the q+1 quotas go to the threads that owned most.
func leastMoves(ctx AssignmentContext, scope []string, prev map[zkutil.TopicPartition]zkutil.ConsumerThreadID) int {
	counts := map[zkutil.ConsumerThreadID]int{}
	total := 0
	for _, t := range scope {
		ths := ctx.ConsumersForTopic[t]
		if len(ths) == 0 {
			continue
		}
		for _, th := range ths {
			counts[th] += 0
		}
		for _, p := range slices.Compact(slices.Sorted(slices.Values(ctx.PartitionsForTopic[t]))) {
			total++
			if o, ok := prev[zkutil.TopicPartition{Topic: t, Partition: p}]; ok && slices.Contains(ths, o) {
				counts[o]++
			}
		}
	}
	if len(counts) == 0 {
		return 0
	}
	owned := slices.Collect(maps.Values(counts))
	slices.SortFunc(owned, func(a, b int) int { return cmp.Compare(b, a) })
	q, r := total/len(owned), total%len(owned)
	least := 0
	for i, n := range owned {
		quota := q
		if i < r {
			quota++
		}
		least += max(0, n-quota)
	}
	return least
}

// assertLocallyBalanced fails unless no partition could move to another
// thread consuming its topic that owns at least two fewer partitions.
func assertLocallyBalanced(t *testing.T, ctx AssignmentContext, a Assignment, msg string) {
	t.Helper()
	counts := perThreadCounts(ctx, a, mapKeys(ctx.PartitionsForTopic))
	for tp, owner := range a.Flatten() {
		for _, other := range ctx.ConsumersForTopic[tp.Topic] {
			if counts[other] <= counts[owner]-2 {
				t.Errorf("%s: %v could move from %v (%d) to %v (%d)", msg, tp, owner, counts[owner], other, counts[other])
				return
			}
		}
	}
}

// TestStickyPropertiesRandomGroups: over random groups and random previous
// assignments, the sticky assignment gives every partition of the group
// exactly once to a thread consuming its topic; it is balanced (within one
// per thread over all topics with identical subscriptions; no single
// improving move otherwise); it moves no more partitions than the least any
// balanced assignment must (identical subscriptions); every member computes
// the same one, whatever the order of its input.
func TestStickyPropertiesRandomGroups(t *testing.T) {
	for seed := range uint64(propertyCases) {
		rng := rand.New(rand.NewPCG(seed, 0x737469636b79))
		identical := rng.IntN(2) == 0
		g := genGroup(rng, identical, rng.IntN(2) == 0)
		prev := randomPrevious(rng, g.context(rng, 0, false))
		var first Assignment
		for me := range g.members {
			ctx := g.context(rng, me, false)
			ctx.Previous = prev
			a := mustAssign(t, StickyAssignor{}, ctx)
			scope := mapKeys(ctx.PartitionsForTopic)
			msg := fmt.Sprintf("seed %d member %d", seed, me)
			checkAssignment(t, ctx, scope, a)
			if identical {
				assertWithinOne(t, perThreadCounts(ctx, a, scope), msg)
				if got, least := moves(stillConsuming(ctx, prev), a.Flatten()), leastMoves(ctx, scope, prev); got != least {
					t.Errorf("%s: %d partitions left a thread that still consumes them, the least possible is %d", msg, got, least)
				}
			} else {
				assertLocallyBalanced(t, ctx, a, msg)
			}
			if me == 0 {
				first = a
			} else {
				assertSameAssignment(t, a, first, "%s: members disagree", msg)
			}
			shuffled := g.context(rng, me, true)
			shuffled.Previous = maps.Clone(prev)
			assertSameAssignment(t, mustAssign(t, StickyAssignor{}, shuffled), a, "%s: result depends on input order", msg)
			// Computed again from its own result, nothing moves.
			again := ctx
			again.Previous = a.Flatten()
			assertSameAssignment(t, mustAssign(t, StickyAssignor{}, again), a, "%s: not stable", msg)
		}
		if t.Failed() {
			t.Fatalf("first failing seed %d", seed)
		}
	}
}

// stickyGroup is a group of members with one stream each consuming topics.
func stickyGroup(members []string, streams int, parts map[string]int) AssignmentContext {
	ctx := AssignmentContext{ConsumerID: members[0], ConsumersForTopic: map[string][]zkutil.ConsumerThreadID{}, PartitionsForTopic: map[string][]int32{}, MyTopicThreadIDs: map[string][]zkutil.ConsumerThreadID{}}
	for t, n := range parts {
		ctx.PartitionsForTopic[t] = partitions(n)
		for _, m := range members {
			ctx.ConsumersForTopic[t] = append(ctx.ConsumersForTopic[t], threadsOf(m, streams)...)
		}
		ctx.MyTopicThreadIDs[t] = threadsOf(members[0], streams)
	}
	ctx.Consumers = members
	return ctx
}

// TestStickyJoinAndLeaveMoveLeast: in a group of four members consuming 32
// and 7 partitions, a member that joins (first in the group's order) takes
// only its share, and a member that leaves gives away only its own
// partitions; range, which keys on the order, moves far more in both.
func TestStickyJoinAndLeaveMoveLeast(t *testing.T) {
	parts := map[string]int{"orders": 32, "audit": 7}
	old := []string{"g_b", "g_c", "g_d", "g_e"}
	joined := append([]string{"g_a"}, old...) // sorts first: range shifts everyone
	left := []string{"g_b", "g_d", "g_e"}     // g_c leaves from the middle

	assign := func(a Assignor, members []string, prev map[zkutil.TopicPartition]zkutil.ConsumerThreadID) map[zkutil.TopicPartition]zkutil.ConsumerThreadID {
		ctx := stickyGroup(members, 2, parts)
		ctx.Previous = prev
		out := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
		// Range computes only the caller's topics: take every member's view.
		for _, m := range members {
			ctx.ConsumerID = m
			for topic := range ctx.MyTopicThreadIDs {
				ctx.MyTopicThreadIDs[topic] = threadsOf(m, 2)
			}
			maps.Copy(out, mustAssign(t, a, ctx).Flatten())
		}
		return out
	}
	owned := func(a map[zkutil.TopicPartition]zkutil.ConsumerThreadID, member string) int {
		n := 0
		for _, th := range a {
			if th.ConsumerID == member {
				n++
			}
		}
		return n
	}

	s0 := assign(StickyAssignor{}, old, nil)
	r0 := assign(RangeAssignor{}, old, nil)
	sJoin, rJoin := assign(StickyAssignor{}, joined, s0), assign(RangeAssignor{}, joined, nil)
	// 39 partitions over 10 threads: the newcomer's two threads take 7 or
	// 8, all of them from others; nothing else moves.
	if got, share := moves(s0, sJoin), owned(sJoin, "g_a"); got != share || share < 7 || share > 8 {
		t.Errorf("join: sticky moved %d partitions, the newcomer owns %d", got, share)
	}
	if moves(r0, rJoin) <= 2*moves(s0, sJoin) {
		t.Errorf("join: range moved %d, sticky %d: expected range to move far more", moves(r0, rJoin), moves(s0, sJoin))
	}

	sLeave, rLeave := assign(StickyAssignor{}, left, s0), assign(RangeAssignor{}, left, nil)
	if got, gone := moves(s0, sLeave), owned(s0, "g_c"); got != gone {
		t.Errorf("leave: sticky moved %d partitions, the member that left owned %d", got, gone)
	}
	if moves(r0, rLeave) <= moves(s0, sLeave) {
		t.Errorf("leave: range moved %d, sticky %d", moves(r0, rLeave), moves(s0, sLeave))
	}
	t.Logf("join: sticky moved %d, range %d; leave: sticky %d, range %d", moves(s0, sJoin), moves(r0, rJoin), moves(s0, sLeave), moves(r0, rLeave))
	for _, a := range []map[zkutil.TopicPartition]zkutil.ConsumerThreadID{s0, sJoin, sLeave} {
		counts := map[zkutil.ConsumerThreadID]int{}
		for _, th := range a {
			counts[th]++
		}
		lo, hi := len(a), 0
		for _, n := range counts {
			lo, hi = min(lo, n), max(hi, n)
		}
		if hi-lo > 1 {
			t.Errorf("unbalanced: %v", counts)
		}
	}
}

// TestStickyFromNothingSpreadsTopics: without a previous assignment, every
// topic's partitions spread over the threads (within one), as range would.
func TestStickyFromNothingSpreadsTopics(t *testing.T) {
	ctx := stickyGroup([]string{"g_a", "g_b", "g_c"}, 1, map[string]int{"x": 6, "y": 3, "z": 4})
	a := mustAssign(t, StickyAssignor{}, ctx)
	for _, topic := range []string{"x", "y", "z"} {
		assertWithinOne(t, perThreadCounts(ctx, a, []string{topic}), topic)
	}
}

func TestNewAssignorSticky(t *testing.T) {
	a, err := NewAssignor(strategyname.Sticky)
	if err != nil || a.Name() != strategyname.Sticky {
		t.Fatalf("NewAssignor(sticky) = %v, %v", a, err)
	}
}
