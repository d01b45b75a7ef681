package kafkagroup

import (
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/javastr"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// owning is a member that subscribes to topics and owns partitions as a
// member of generation gen.
func owning(gen int32, owned map[string][]int32, topics ...string) memberSubscription {
	return memberSubscription{Topics: topics, Owned: owned, Generation: gen}
}

// TestCooperativeStickyGolden checks cases worked out by hand from the
// rules of Java's CooperativeStickyAssignor.
func TestCooperativeStickyGolden(t *testing.T) {
	cases := []struct {
		name    string
		counts  map[string]int32
		members map[string]memberSubscription
		want    groupAssignment
	}{
		{
			// A new group: nothing owned, partitions round-robin in
			// partition order over the members sorted by id.
			name:   "fresh group",
			counts: map[string]int32{"t": 5},
			members: map[string]memberSubscription{
				"b": owning(noGeneration, nil, "t"), "a": owning(noGeneration, nil, "t"),
			},
			want: groupAssignment{"a": {"t": {0, 2, 4}}, "b": {"t": {1, 3}}},
		},
		{
			// c joins a and b, which own three each: each keeps two (the
			// first two by partition number) and gives one up; the given-up
			// partitions are withheld from c in this generation (first
			// phase of the cooperative protocol).
			name:   "join: first phase withholds what moves",
			counts: map[string]int32{"t": 6},
			members: map[string]memberSubscription{
				"a": owning(4, map[string][]int32{"t": {0, 1, 2}}, "t"),
				"b": owning(4, map[string][]int32{"t": {3, 4, 5}}, "t"),
				"c": owning(noGeneration, nil, "t"),
			},
			want: groupAssignment{"a": {"t": {0, 1}}, "b": {"t": {3, 4}}, "c": {}},
		},
		{
			// The follow-up rebalance: a and b own what they kept, so the
			// partitions they gave up go to c.
			name:   "join: second phase assigns what was revoked",
			counts: map[string]int32{"t": 6},
			members: map[string]memberSubscription{
				"a": owning(5, map[string][]int32{"t": {0, 1}}, "t"),
				"b": owning(5, map[string][]int32{"t": {3, 4}}, "t"),
				"c": owning(5, nil, "t"),
			},
			want: groupAssignment{"a": {"t": {0, 1}}, "b": {"t": {3, 4}}, "c": {"t": {2, 5}}},
		},
		{
			// b left: its partitions are nobody's, so a and c take them at
			// once; nobody gives anything up.
			name:   "leave: orphans assigned at once",
			counts: map[string]int32{"t": 6},
			members: map[string]memberSubscription{
				"a": owning(6, map[string][]int32{"t": {0, 1}}, "t"),
				"c": owning(6, map[string][]int32{"t": {2, 5}}, "t"),
			},
			want: groupAssignment{"a": {"t": {0, 1, 3}}, "c": {"t": {2, 4, 5}}},
		},
		{
			// Uneven: 7 partitions, 3 members; one member may keep 3. a is
			// visited first and keeps its 3; b must drop to 2.
			name:   "uneven quotas",
			counts: map[string]int32{"t": 7},
			members: map[string]memberSubscription{
				"a": owning(2, map[string][]int32{"t": {0, 1, 2}}, "t"),
				"b": owning(2, map[string][]int32{"t": {3, 4, 5, 6}}, "t"),
				"c": owning(noGeneration, nil, "t"),
			},
			want: groupAssignment{"a": {"t": {0, 1, 2}}, "b": {"t": {3, 4}}, "c": {}},
		},
		{
			// A member of an older generation claims partition 0 too: the
			// claim of the higher generation wins; z's other claims stand.
			// z's claim of 0 is still a claim: 0 goes to a, which keeps
			// it, so nothing is withheld.
			name:   "stale generation",
			counts: map[string]int32{"t": 4},
			members: map[string]memberSubscription{
				"a": owning(7, map[string][]int32{"t": {0, 1}}, "t"),
				"z": owning(3, map[string][]int32{"t": {0, 2, 3}}, "t"),
			},
			want: groupAssignment{"a": {"t": {0, 1}}, "z": {"t": {2, 3}}},
		},
		{
			// Two members of the same generation claim partition 1: it
			// belongs to neither, and is withheld this time.
			name:   "doubly claimed",
			counts: map[string]int32{"t": 4},
			members: map[string]memberSubscription{
				"a": owning(7, map[string][]int32{"t": {0, 1}}, "t"),
				"b": owning(7, map[string][]int32{"t": {1, 2, 3}}, "t"),
			},
			want: groupAssignment{"a": {"t": {0}}, "b": {"t": {2, 3}}},
		},
		{
			// Different subscriptions (general case): b alone reads u and
			// also reads t. a owns 4, b 2: one of a's moves to b, so the
			// loads become 3 and 3; being a's still, it is withheld from b
			// this time.
			name:   "general case",
			counts: map[string]int32{"t": 4, "u": 2},
			members: map[string]memberSubscription{
				"a": owning(3, map[string][]int32{"t": {0, 1, 2, 3}}, "t"),
				"b": owning(3, map[string][]int32{"u": {0, 1}}, "t", "u"),
			},
			want: groupAssignment{"a": {"t": {1, 2, 3}}, "b": {"u": {0, 1}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cooperativeStickyAssignor{}.Assign(tc.counts, tc.members)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestCooperativeStickyProperties runs random groups through rebalances
// (members join and leave, subscriptions change) as the cooperative
// protocol runs them: each member reports what it owns, gives up what its
// assignment leaves out, and the group rebalances again at once when
// anything was given up. Every assignment must give each partition to at
// most one member, never to a member other than one that owns it in the
// same rebalance (the two-phase rule), let every member keep what it owned
// up to its fair share, and, once the follow-up rebalance is done, be
// complete and balanced.
func TestCooperativeStickyProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	for round := 0; round < 300; round++ {
		counts := map[string]int32{"a": int32(1 + rng.IntN(10)), "b": int32(rng.IntN(8)), "c": int32(1 + rng.IntN(5))}
		same := rng.IntN(2) == 0
		owned := map[string]map[string][]int32{}
		topicsOf := map[string][]string{}
		gen := int32(0)
		for step := 0; step < 8; step++ {
			// Membership changes.
			if len(owned) == 0 || rng.IntN(3) > 0 {
				id := fmt.Sprintf("m%02d", rng.IntN(20))
				if _, ok := owned[id]; !ok {
					owned[id] = nil
				}
			}
			if len(owned) > 1 && rng.IntN(3) == 0 {
				delete(owned, slices.Sorted(maps.Keys(owned))[0])
			}
			for id := range owned {
				if _, ok := topicsOf[id]; !ok || (!same && rng.IntN(5) == 0) {
					topicsOf[id] = []string{"a", "b", "c"}
					if !same {
						topicsOf[id] = slices.DeleteFunc([]string{"a", "b", "c"}, func(string) bool { return rng.IntN(3) == 0 })
						if len(topicsOf[id]) == 0 {
							topicsOf[id] = []string{"c"}
						}
					}
				}
			}
			for phase := 0; ; phase++ {
				require.Less(t, phase, 3, "round %d step %d: more than one follow-up rebalance", round, step)
				members := map[string]memberSubscription{}
				for id, o := range owned {
					members[id] = owning(gen, o, topicsOf[id]...)
				}
				got, err := cooperativeStickyAssignor{}.Assign(counts, members)
				require.NoError(t, err)
				revoked := checkCooperative(t, counts, members, got, same)
				gen++
				for id := range owned {
					owned[id] = got[id]
				}
				if !revoked {
					checkComplete(t, counts, members, got, same)
					break
				}
			}
		}
	}
}

// checkCooperative checks one assignment and reports whether any member
// gives partitions up.
func checkCooperative(t *testing.T, counts map[string]int32, members map[string]memberSubscription, got groupAssignment, same bool) bool {
	t.Helper()
	owner := map[topicPartition]string{}
	for id, m := range members {
		for topic, ps := range m.Owned {
			for _, p := range ps {
				owner[topicPartition{topic, p}] = id
			}
		}
	}
	seen := map[topicPartition]string{}
	revoked := false
	total := 0
	for _, n := range counts {
		total += int(n)
	}
	for id, topics := range got {
		for topic, ps := range topics {
			require.True(t, slices.Contains(members[id].Topics, topic), "%s got %s, not subscribed", id, topic)
			for _, p := range ps {
				k := topicPartition{topic, p}
				require.Less(t, p, counts[topic])
				other, dup := seen[k]
				require.False(t, dup, "%s-%d given to %s and %s", topic, p, id, other)
				seen[k] = id
				if o, ok := owner[k]; ok {
					require.Equal(t, o, id, "%s-%d given to %s while %s still owns it", topic, p, id, o)
				}
			}
		}
		// Sticky: kept at least what it owned, up to its fair share.
		kept := 0
		for topic, ps := range members[id].Owned {
			for _, p := range ps {
				if slices.Contains(got[id][topic], p) {
					kept++
				} else {
					revoked = true
				}
			}
		}
		if same {
			owned := 0
			for _, ps := range members[id].Owned {
				owned += len(ps)
			}
			require.GreaterOrEqual(t, kept, min(owned, total/len(members)), "%s kept too little", id)
		}
	}
	return revoked
}

// checkComplete checks an assignment after which nobody gives anything up:
// every subscribed partition is assigned, and the loads are balanced.
func checkComplete(t *testing.T, counts map[string]int32, members map[string]memberSubscription, got groupAssignment, same bool) {
	t.Helper()
	load := map[string]int{}
	assigned := map[topicPartition]bool{}
	for id, topics := range got {
		for topic, ps := range topics {
			load[id] += len(ps)
			for _, p := range ps {
				assigned[topicPartition{topic, p}] = true
			}
		}
	}
	for topic, n := range counts {
		subscribed := false
		for _, m := range members {
			subscribed = subscribed || slices.Contains(m.Topics, topic)
		}
		for p := range n {
			require.Equal(t, subscribed, assigned[topicPartition{topic, p}], "%s-%d", topic, p)
		}
	}
	for a, ma := range members {
		for b, mb := range members {
			if same {
				require.LessOrEqual(t, load[a]-load[b], 1, "unbalanced: %v", load)
				continue
			}
			// No partition of a could move to b, which has two fewer.
			if load[a]-load[b] < 2 {
				continue
			}
			for topic := range got[a] {
				require.False(t, slices.Contains(mb.Topics, topic), "unbalanced: %s (%d, %v) could give %s to %s (%d, %v)", a, load[a], ma.Topics, topic, b, load[b], mb.Topics)
			}
		}
	}
}

// TestCooperativeStickyAgainstKafka runs Kafka 3.9's own
// CooperativeStickyAssignor (testdata/CooperativeStickyOracle.java) on
// random groups whose members own partitions, with generations, stale and
// doubly claimed partitions among them. Where every member subscribes to
// the same topics and Java's hash map visits the member ids in sorted
// order (so that Java's result does not depend on an order this package
// cannot know), it requires the very same assignment; for the other
// groups of equal subscriptions, the same loads. Groups with different
// subscriptions are drawn too (the oracle must accept them), but only
// TestCooperativeStickyProperties judges their assignments.
func TestCooperativeStickyAgainstKafka(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 13))
	var inputs []groupInput
	for i := 0; i < 400; i++ {
		inputs = append(inputs, randomStickyGroup(rng, i%4 != 0))
	}
	java := askCooperativeSticky(t, inputs)
	exact := 0
	for i, in := range inputs {
		got, err := cooperativeStickyAssignor{}.Assign(in.counts, in.members)
		require.NoError(t, err)
		for id, topics := range got {
			if len(topics) == 0 {
				delete(got, id)
			}
		}
		switch {
		case in.racks != nil:
			// Different subscriptions: Java's general algorithm is not
			// ported move for move (see cooperativeStickyAssignor);
			// TestCooperativeStickyProperties checks what it promises.
		case javaSortedOrder(slices.Collect(maps.Keys(in.members))):
			exact++
			require.Equal(t, java[i], got, "case %d: counts %v members %v", i, in.counts, in.members)
		default:
			require.Equal(t, loads(java[i]), loads(got), "case %d: counts %v members %v", i, in.counts, in.members)
		}
	}
	t.Logf("%d of %d cases compared exactly", exact, len(inputs))
	require.Greater(t, exact, len(inputs)/10)
}

// loads returns the sorted partition counts of an assignment's members.
func loads(a groupAssignment) []int {
	var out []int
	for _, topics := range a {
		n := 0
		for _, ps := range topics {
			n += len(ps)
		}
		if n > 0 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// javaSortedOrder reports whether a java.util.HashMap holding ids (default
// capacity, grown as it fills) iterates them in sorted order: bucket by
// bucket, the bucket of a key being its spread String.hashCode masked by
// the capacity.
func javaSortedOrder(ids []string) bool {
	capacity := 16
	for float64(len(ids)) > 0.75*float64(capacity) {
		capacity *= 2
	}
	bucket := func(s string) int {
		h := uint32(javastr.Hash(s))
		return int((h ^ h>>16) & uint32(capacity-1))
	}
	slices.SortFunc(ids, javastr.Compare)
	for i := 1; i < len(ids); i++ {
		if bucket(ids[i-1]) >= bucket(ids[i]) {
			return false
		}
	}
	return true
}

// randomStickyGroup draws a group whose members own partitions: a
// previous assignment, shuffled by members leaving and joining, with a
// stale or doubly claimed partition now and then. With same, every member
// subscribes to the same topics; racks is set (to non-nil) otherwise, to
// mark the case as one of different subscriptions.
func randomStickyGroup(rng *rand.Rand, same bool) groupInput {
	in := groupInput{counts: map[string]int32{}, members: map[string]memberSubscription{}}
	if !same {
		in.racks = map[string]string{}
	}
	topics := []string{"orders", "t\uff21", "z"}[:1+rng.IntN(3)]
	for _, topic := range topics {
		in.counts[topic] = int32(1 + rng.IntN(9))
	}
	var all []topicPartition
	for _, topic := range topics {
		for p := range in.counts[topic] {
			all = append(all, topicPartition{topic, p})
		}
	}
	n := 1 + rng.IntN(5)
	gen := int32(1 + rng.IntN(9))
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("consumer-%d-%04x", i, rng.IntN(1<<16))
		m := memberSubscription{Topics: slices.Clone(topics), Generation: gen, Owned: map[string][]int32{}}
		if !same && rng.IntN(2) == 0 {
			m.Topics = m.Topics[:1+rng.IntN(len(m.Topics))]
		}
		switch rng.IntN(6) {
		case 0:
			m.Generation = noGeneration
		case 1:
			m.Generation = gen - 1
		}
		in.members[id] = m
	}
	ids := slices.Sorted(maps.Keys(in.members))
	for _, p := range all {
		if rng.IntN(4) == 0 {
			continue // its owner left
		}
		id := ids[rng.IntN(len(ids))]
		if rng.IntN(3) == 0 {
			continue // owned by a member that just joined: nobody
		}
		in.members[id].Owned[p.topic] = append(in.members[id].Owned[p.topic], p.partition)
		if rng.IntN(15) == 0 {
			other := ids[rng.IntN(len(ids))]
			if other != id {
				in.members[other].Owned[p.topic] = append(in.members[other].Owned[p.topic], p.partition)
			}
		}
	}
	return in
}

// askCooperativeSticky runs every case through
// testdata/CooperativeStickyOracle.java in one JVM.
func askCooperativeSticky(t *testing.T, inputs []groupInput) []groupAssignment {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a JVM: skipped by -short")
	}
	java, err := exec.LookPath("java")
	require.NoError(t, err, "this test runs Kafka's Java assignors and needs Java 11 or later")
	lib, err := testcluster.Kafka39Lib()
	require.NoError(t, err, "this test needs Kafka 3.9's jars in .cache/kafka39 (testinfra/fetch-jars.sh)")
	enc := func(s string) string { return hex.EncodeToString([]byte(s)) }
	var in strings.Builder
	for _, g := range inputs {
		var counts []string
		for _, topic := range slices.Sorted(maps.Keys(g.counts)) {
			counts = append(counts, enc(topic)+":"+strconv.Itoa(int(g.counts[topic])))
		}
		in.WriteString(orDash(strings.Join(counts, ",")))
		for _, id := range slices.Sorted(maps.Keys(g.members)) {
			m := g.members[id]
			var topics, owned []string
			for _, topic := range m.Topics {
				topics = append(topics, enc(topic))
			}
			var ps []topicPartition
			for topic, list := range m.Owned {
				for _, p := range list {
					ps = append(ps, topicPartition{topic, p})
				}
			}
			slices.SortFunc(ps, compareTopicPartitions)
			for _, p := range ps {
				owned = append(owned, enc(p.topic)+"/"+strconv.Itoa(int(p.partition)))
			}
			fmt.Fprintf(&in, " %s;%d;%s;%s", enc(id), m.Generation, orDash(strings.Join(topics, ",")), orDash(strings.Join(owned, ",")))
		}
		in.WriteByte('\n')
	}
	return runOracle(t, java, lib, "CooperativeStickyOracle.java", in.String(), len(inputs))
}

// FuzzCooperativeSticky feeds the assignor groups built from arbitrary
// bytes, with owned partitions out of range, of unknown topics, claimed
// twice, and any generations: it must never panic, and must return an
// assignment that gives each existing partition to at most one subscribed
// member.
func FuzzCooperativeSticky(f *testing.F) {
	f.Add([]byte{3, 1, 2, 0, 5, 1, 7, 2, 2, 9, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		next := func() int {
			if len(b) == 0 {
				return 0
			}
			v := int(b[0])
			b = b[1:]
			return v
		}
		topics := []string{"a", "b", "c"}
		counts := map[string]int32{}
		for _, topic := range topics {
			counts[topic] = int32(next() % 7)
		}
		members := map[string]memberSubscription{}
		for i := range 1 + next()%5 {
			m := memberSubscription{Generation: int32(next()%5) - 2, Owned: map[string][]int32{}}
			for _, topic := range topics {
				if next()%2 == 0 {
					m.Topics = append(m.Topics, topic)
				}
				for range next() % 4 {
					m.Owned[topic] = append(m.Owned[topic], int32(next()%10)-2)
				}
			}
			members[fmt.Sprintf("m%d", i)] = m
		}
		got, err := cooperativeStickyAssignor{}.Assign(counts, members)
		require.NoError(t, err)
		seen := map[topicPartition]bool{}
		for id, ts := range got {
			for topic, ps := range ts {
				require.Contains(t, members[id].Topics, topic)
				for _, p := range ps {
					require.True(t, p >= 0 && p < counts[topic])
					require.False(t, seen[topicPartition{topic, p}])
					seen[topicPartition{topic, p}] = true
				}
			}
		}
	})
}
