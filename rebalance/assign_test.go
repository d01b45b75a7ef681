package rebalance

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// randomGroup is a group of up to 6 members subscribing to random subsets
// of 4 topics with 0 to 3 streams each; one topic may have no partitions.
func randomGroup(rng *rand.Rand) Group {
	topics := []string{"orders", "audit", "Aa", "BB"}
	g := Group{Members: map[string]map[string]int{}, Partitions: map[string][]int32{}}
	for _, t := range topics {
		n := rng.IntN(14)
		for p := range n {
			g.Partitions[t] = append(g.Partitions[t], int32(p))
		}
	}
	for m := range 1 + rng.IntN(6) {
		sub := map[string]int{}
		for _, t := range topics {
			if rng.IntN(2) == 0 {
				sub[t] = rng.IntN(4)
			}
		}
		g.Members[fmt.Sprintf("grp_host%d-%d", m, rng.IntN(100))] = sub
	}
	return g
}

// share is what member computes as a member of g with a: the owners of
// the partitions of its own topics.
func share(t *testing.T, g Group, member string, a zkassign.Assignor) map[zkutil.TopicPartition]Stream {
	t.Helper()
	ctx, err := readGroup(g)
	require.NoError(t, err)
	ctx.ConsumerID, ctx.MyTopicThreadIDs = member, threadsOf(member, g.Members[member])
	got, err := a.Assign(ctx)
	require.NoError(t, err)
	out := map[zkutil.TopicPartition]Stream{}
	for tp, th := range got.Flatten() {
		if _, mine := ctx.MyTopicThreadIDs[tp.Topic]; mine {
			out[tp] = Stream{Member: th.ConsumerID, N: th.Thread}
		}
	}
	return out
}

// TestEveryMemberAgrees: on random groups, Range and RoundRobin give, for
// every member's topics, the owners that member computes for them as a
// member of the group (the module's members run the same assignors, held
// to Kafka's vectors by their own tests); every partition of a topic with
// streams has an owner that subscribes to it, and no other partition has.
func TestEveryMemberAgrees(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	for range 300 {
		g := randomGroup(rng)
		for _, tc := range []struct {
			name     string
			assign   func(Group) (Owners, error)
			assignor zkassign.Assignor
		}{
			{"range", Range, zkassign.RangeAssignor{}},
			{"roundrobin/dash", func(g Group) (Owners, error) { return RoundRobin(g, HashDash) }, zkassign.RoundRobinAssignor{HashFormat: zkassign.HashFormatDash}},
			{"roundrobin/bracket", func(g Group) (Owners, error) { return RoundRobin(g, HashBracket) }, zkassign.RoundRobinAssignor{HashFormat: zkassign.HashFormatBracket}},
		} {
			owners, err := tc.assign(g)
			require.NoError(t, err)
			for member := range g.Members {
				for tp, want := range share(t, g, member, tc.assignor) {
					require.Equal(t, want, owners[tp.Topic][tp.Partition], "%s %v: %s as %s computes it", tc.name, g, tp, member)
				}
			}
			for topic, parts := range g.Partitions {
				streams := 0
				for _, sub := range g.Members {
					streams += sub[topic]
				}
				if streams == 0 {
					require.Empty(t, owners[topic], "%s %v: %s has no streams", tc.name, g, topic)
					continue
				}
				require.Len(t, owners[topic], len(parts), "%s %v: %s", tc.name, g, topic)
				for p, s := range owners[topic] {
					require.Less(t, s.N, g.Members[s.Member][topic], "%s %v: %s-%d owned by %s", tc.name, g, topic, p, s)
				}
			}
		}
	}
}

// TestGroupsNoRegistrationDescribes: an empty member id or topic, a
// negative stream count or partition, or an unknown hash format is an
// error; an empty group owns nothing.
func TestGroupsNoRegistrationDescribes(t *testing.T) {
	parts := map[string][]int32{"t": {0, 1}}
	for name, g := range map[string]Group{
		"empty member id":    {Members: map[string]map[string]int{"": {"t": 1}}, Partitions: parts},
		"empty topic":        {Members: map[string]map[string]int{"m": {"": 1}}, Partitions: parts},
		"negative streams":   {Members: map[string]map[string]int{"m": {"t": -1}}, Partitions: parts},
		"negative partition": {Members: map[string]map[string]int{"m": {"t": 1}}, Partitions: map[string][]int32{"t": {-1}}},
		"empty topic parts":  {Members: map[string]map[string]int{"m": {"t": 1}}, Partitions: map[string][]int32{"": {0}}},
	} {
		_, err := Range(g)
		require.ErrorContains(t, err, "rebalance: ", name)
		_, err = RoundRobin(g, HashDash)
		require.ErrorContains(t, err, "rebalance: ", name)
	}
	g := Group{Members: map[string]map[string]int{"m": {"t": 1}}, Partitions: parts}
	_, err := RoundRobin(g, HashFormat(7))
	require.EqualError(t, err, "rebalance: unknown roundrobin hash format HashFormat(7)")
	for _, empty := range []Group{{}, {Partitions: parts}} {
		owners, err := Range(empty)
		require.NoError(t, err)
		require.Empty(t, owners)
		owners, err = RoundRobin(empty, HashBracket)
		require.NoError(t, err)
		require.Empty(t, owners)
	}
}
