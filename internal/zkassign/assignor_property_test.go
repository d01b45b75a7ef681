package zkassign

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// propertyCases is how many random groups each property test checks.
const propertyCases = 400

// topicPool holds topic names for random groups, including the Java-hash
// twins "Aa" and "BB" and names that sort differently as strings and numbers.
var topicPool = []string{"events", "Aa", "BB", "orders", "t.10", "t.9", "logs_2", "a-b"}

// randomMember is one member of a random group and its subscription.
type randomMember struct {
	id      string
	streams map[string]int // topic -> number of streams
}

// randomGroup is a random but consistent group: its members and the
// partitions of its topics.
type randomGroup struct {
	members    []randomMember
	partitions map[string][]int32
	idle       []string // registered members with no subscription
}

// genGroup builds a random group. With identical set, every member
// subscribes to every topic with one stream count (which differs between
// members), so every topic has the same set of threads: Kafka's "identical
// subscriptions". Otherwise each member subscribes to a random subset of
// the topics, with one stream count for all of them if wildcard is set (as
// a wildcard member registers) or a count per topic if not.
func genGroup(rng *rand.Rand, identical, wildcard bool) randomGroup {
	nTopics := rng.IntN(len(topicPool) + 1)
	topics := slices.Clone(topicPool)
	rng.Shuffle(len(topics), func(i, j int) { topics[i], topics[j] = topics[j], topics[i] })
	topics = topics[:nTopics]

	g := randomGroup{partitions: map[string][]int32{}}
	for _, t := range topics {
		switch rng.IntN(10) {
		case 0: // topic node missing: no partitions
		case 1:
			g.partitions[t] = nil
		default:
			n := rng.IntN(25)
			for p := range n {
				g.partitions[t] = append(g.partitions[t], int32(p))
			}
		}
	}
	if rng.IntN(4) == 0 {
		// A topic nobody subscribes to.
		g.partitions["unsubscribed"] = []int32{0, 1, 2}
	}

	nMembers := 1 + rng.IntN(5)
	prefixes := []string{"grp_hostA", "grp_hostB", "c", "c-1", "grp_hostA-1"}
	for i := range nMembers {
		m := randomMember{
			id:      fmt.Sprintf("%s-%d-%08x", prefixes[rng.IntN(len(prefixes))], i, rng.Uint32()),
			streams: map[string]int{},
		}
		streams := 1 + rng.IntN(12)
		for _, t := range topics {
			if identical {
				m.streams[t] = streams
				continue
			}
			if rng.IntN(3) == 0 {
				continue
			}
			if !wildcard {
				streams = 1 + rng.IntN(12)
			}
			m.streams[t] = streams
		}
		g.members = append(g.members, m)
	}
	if rng.IntN(4) == 0 {
		g.idle = append(g.idle, fmt.Sprintf("idle-%08x", rng.Uint32()))
	}
	return g
}

// threads returns m's thread ids for topic.
func (m randomMember) threads(topic string) []zkutil.ConsumerThreadID {
	var out []zkutil.ConsumerThreadID
	for n := range m.streams[topic] {
		out = append(out, zkutil.ConsumerThreadID{ConsumerID: m.id, Thread: n})
	}
	return out
}

// context returns the AssignmentContext member me sees. With shuffle set,
// every slice is shuffled and some thread ids and partitions duplicated;
// maps are walked in sorted key order so that a seed always gives the same
// input.
func (g randomGroup) context(rng *rand.Rand, me int, shuffle bool) AssignmentContext {
	ctx := AssignmentContext{
		ConsumerID:         g.members[me].id,
		MyTopicThreadIDs:   map[string][]zkutil.ConsumerThreadID{},
		ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{},
		PartitionsForTopic: map[string][]int32{},
	}
	for t := range g.members[me].streams {
		ctx.MyTopicThreadIDs[t] = g.members[me].threads(t)
	}
	for _, m := range g.members {
		ctx.Consumers = append(ctx.Consumers, m.id)
		for t := range m.streams {
			ctx.ConsumersForTopic[t] = append(ctx.ConsumersForTopic[t], m.threads(t)...)
		}
	}
	ctx.Consumers = append(ctx.Consumers, g.idle...)
	for t, ps := range g.partitions {
		ctx.PartitionsForTopic[t] = slices.Clone(ps)
	}
	if !shuffle {
		return ctx
	}
	for _, t := range slices.Sorted(maps.Keys(ctx.ConsumersForTopic)) {
		ths := ctx.ConsumersForTopic[t]
		if len(ths) > 0 && rng.IntN(3) == 0 {
			ths = append(ths, ths[rng.IntN(len(ths))])
		}
		shuffleSlice(rng, ths)
		ctx.ConsumersForTopic[t] = ths
	}
	for _, t := range slices.Sorted(maps.Keys(ctx.PartitionsForTopic)) {
		ps := ctx.PartitionsForTopic[t]
		if len(ps) > 0 && rng.IntN(3) == 0 {
			ps = append(ps, ps[rng.IntN(len(ps))])
		}
		shuffleSlice(rng, ps)
		ctx.PartitionsForTopic[t] = ps
	}
	for _, t := range slices.Sorted(maps.Keys(ctx.MyTopicThreadIDs)) {
		shuffleSlice(rng, ctx.MyTopicThreadIDs[t])
	}
	shuffleSlice(rng, ctx.Consumers)
	return ctx
}

func shuffleSlice[T any](rng *rand.Rand, s []T) {
	rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
}

// checkAssignment verifies that exactly the partitions of the topics in
// scope are assigned, each once, to a thread subscribing to its topic, filed
// under that thread's member, and that every member has an entry.
func checkAssignment(t *testing.T, ctx AssignmentContext, scope []string, a Assignment) {
	t.Helper()
	for _, id := range ctx.Consumers {
		if _, ok := a[id]; !ok {
			t.Errorf("member %q has no entry", id)
		}
	}
	owned := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for member, tps := range a {
		for tp, id := range tps {
			if id.ConsumerID != member {
				t.Errorf("%v owned by %v but filed under member %q", tp, id, member)
			}
			if _, dup := owned[tp]; dup {
				t.Errorf("%v assigned twice", tp)
			}
			owned[tp] = id
			if !slices.Contains(ctx.ConsumersForTopic[tp.Topic], id) {
				t.Errorf("%v given to %v, which does not subscribe to its topic", tp, id)
			}
		}
	}
	want := 0
	for _, topic := range scope {
		if len(ctx.ConsumersForTopic[topic]) == 0 {
			continue
		}
		ps := slices.Clone(ctx.PartitionsForTopic[topic])
		slices.Sort(ps)
		ps = slices.Compact(ps)
		want += len(ps)
		for _, p := range ps {
			if _, ok := owned[zkutil.TopicPartition{Topic: topic, Partition: p}]; !ok {
				t.Errorf("%s-%d unassigned", topic, p)
			}
		}
	}
	if len(owned) != want {
		t.Errorf("%d partitions assigned, want %d (the topics in scope)", len(owned), want)
	}
}

// perThreadCounts counts the partitions each thread owns, over the topics in
// scope, including threads that own nothing.
func perThreadCounts(ctx AssignmentContext, a Assignment, scope []string) map[zkutil.ConsumerThreadID]int {
	counts := map[zkutil.ConsumerThreadID]int{}
	inScope := map[string]bool{}
	for _, topic := range scope {
		inScope[topic] = true
		for _, id := range ctx.ConsumersForTopic[topic] {
			counts[id] = 0 // threads that own nothing count too
		}
	}
	for _, tps := range a {
		for tp, id := range tps {
			if inScope[tp.Topic] {
				counts[id]++
			}
		}
	}
	return counts
}

// assertWithinOne fails the test if two counts differ by more than one.
func assertWithinOne(t *testing.T, counts map[zkutil.ConsumerThreadID]int, msg string) {
	t.Helper()
	if len(counts) == 0 {
		return
	}
	lo, hi := math.MaxInt, 0
	for _, c := range counts {
		lo, hi = min(lo, c), max(hi, c)
	}
	if hi-lo > 1 {
		t.Errorf("%s: unbalanced counts %v", msg, counts)
	}
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestRangePropertiesRandomGroups(t *testing.T) {
	for seed := range uint64(propertyCases) {
		rng := rand.New(rand.NewPCG(seed, 0x72616e6765))
		g := genGroup(rng, rng.IntN(2) == 0, rng.IntN(2) == 0)
		// global collects every member's view; members must agree.
		global := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
		for me := range g.members {
			ctx := g.context(rng, me, false)
			a := mustAssign(t, RangeAssignor{}, ctx)
			scope := mapKeys(ctx.MyTopicThreadIDs)
			checkAssignment(t, ctx, scope, a)
			for _, topic := range scope {
				assertWithinOne(t, perThreadCounts(ctx, a, []string{topic}), fmt.Sprintf("seed %d topic %s", seed, topic))
			}
			for _, tps := range a {
				for tp, id := range tps {
					if prev, ok := global[tp]; ok && prev != id {
						t.Errorf("seed %d: members disagree on %v: %v vs %v", seed, tp, prev, id)
					}
					global[tp] = id
				}
			}
			shuffled := mustAssign(t, RangeAssignor{}, g.context(rng, me, true))
			assertSameAssignment(t, shuffled, a, "seed %d: result depends on input order", seed)
		}
		if t.Failed() {
			t.Fatalf("first failing seed %d", seed)
		}
	}
}

func TestRoundRobinPropertiesRandomGroups(t *testing.T) {
	for _, format := range []RoundRobinHashFormat{HashFormatDash, HashFormatBracket} {
		t.Run(format.String(), func(t *testing.T) {
			rr := RoundRobinAssignor{HashFormat: format}
			for seed := range uint64(propertyCases) {
				rng := rand.New(rand.NewPCG(seed, 0x7272))
				identical := rng.IntN(2) == 0
				g := genGroup(rng, identical, rng.IntN(2) == 0)
				var first Assignment
				for me := range g.members {
					ctx := g.context(rng, me, false)
					a := mustAssign(t, rr, ctx)
					scope := mapKeys(ctx.PartitionsForTopic)
					checkAssignment(t, ctx, scope, a)
					if me == 0 {
						first = a
					} else {
						assertSameAssignment(t, a, first, "seed %d: members disagree", seed)
					}
					if identical {
						assertWithinOne(t, perThreadCounts(ctx, a, scope), fmt.Sprintf("seed %d", seed))
					}
					shuffled := mustAssign(t, rr, g.context(rng, me, true))
					assertSameAssignment(t, shuffled, a, "seed %d: result depends on input order", seed)
				}
				if t.Failed() {
					t.Fatalf("first failing seed %d", seed)
				}
			}
		})
	}
}
