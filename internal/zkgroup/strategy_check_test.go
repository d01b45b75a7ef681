package zkgroup

import (
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestAdmit: members that record no strategy (Scala) are always in and
// sticky members step out for them; otherwise the older registration wins;
// range and Scala members share the group as before; every reader decides
// the same whatever the order it read the members in.
func TestAdmit(t *testing.T) {
	m := func(id, strategy string, age int64) groupMember {
		return groupMember{id: id, strategy: strategy, czxid: age}
	}
	cases := []struct {
		name    string
		members []groupMember
		out     []string
	}{
		{"sticky only", []groupMember{m("a", "sticky", 1), m("b", "sticky", 2)}, nil},
		{"range with Scala", []groupMember{m("a", "range", 1), m("scala", "", 2), m("c", "roundrobin", 3)}, []string{"c"}},
		{"Scala joins a sticky group", []groupMember{m("a", "sticky", 1), m("b", "sticky", 2), m("scala", "", 3)}, []string{"a", "b"}},
		{"range joins a sticky group", []groupMember{m("a", "sticky", 1), m("b", "sticky", 2), m("r", "range", 3)}, []string{"r"}},
		{"sticky joins a range group", []groupMember{m("r1", "range", 1), m("s", "sticky", 2), m("r2", "range", 3)}, []string{"s"}},
		{"same age: by id", []groupMember{m("b", "range", 7), m("a", "sticky", 7)}, []string{"b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 {
				members := slices.Clone(tc.members)
				rand.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
				out := admit("g", members)
				require.Equal(t, tc.out, slices.Sorted(maps.Keys(out)))
				for id, e := range out {
					require.Equal(t, id, e.Member)
					require.NotEmpty(t, e.Conflicts)
					require.ErrorIs(t, e, ErrInconsistentStrategy)
				}
			}
		})
	}
}

// TestStrategyErrorNamesMembers: the error names the member, the group,
// both strategies, the conflicting members and what to do.
func TestStrategyErrorNamesMembers(t *testing.T) {
	out := admit("orders", []groupMember{
		{id: "orders_r", strategy: "range", czxid: 1},
		{id: "orders_scala", czxid: 2},
		{id: "orders_s", strategy: "sticky", czxid: 3},
	})
	var e *StrategyError
	require.True(t, errors.As(out["orders_s"], &e))
	msg := e.Error()
	for _, want := range []string{"orders_s", "group orders", `runs "sticky"`, `orders_r ("range")`, "orders_scala (no recorded strategy: Kafka's Scala consumer", "the sticky strategy needs every member"} {
		require.Contains(t, msg, want)
	}
	var many []MemberStrategy
	for range 12 {
		many = append(many, MemberStrategy{ID: "x", Strategy: "range"})
	}
	msg = (&StrategyError{Group: "g", Member: "m", Strategy: "sticky", Conflicts: many}).Error()
	require.Equal(t, 5, strings.Count(msg, `x ("range")`))
	require.Contains(t, msg, "and 7 more")
}

// TestStickyRecordRoundTrip: the sticky assignment node holds what the
// members agreed on: decoded, it is the assignment encoded, partition by
// partition.
func TestStickyRecordRoundTrip(t *testing.T) {
	threads := []zkutil.ConsumerThreadID{{ConsumerID: "g_a", Thread: 0}, {ConsumerID: "g_a", Thread: 1}, {ConsumerID: "g_b", Thread: 0}}
	ctx := zkassign.AssignmentContext{
		ConsumerID:         "g_a",
		MyTopicThreadIDs:   map[string][]zkutil.ConsumerThreadID{"orders": threads[:2], "audit": threads[:2]},
		ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{"orders": threads, "audit": threads},
		PartitionsForTopic: map[string][]int32{"orders": {0, 1, 2, 3, 4, 5, 6}, "audit": {0, 1}},
		Consumers:          []string{"g_a", "g_b"},
	}
	a, err := zkassign.StickyAssignor{}.Assign(ctx)
	require.NoError(t, err)
	node, err := encodeSticky(a, 7, "fp")
	require.NoError(t, err)
	rec, previous, err := decodeSticky("p", node)
	require.NoError(t, err)
	require.Equal(t, a.Flatten(), previous)
	require.Equal(t, int32(7), rec.IDsCversion)
	require.Equal(t, "fp", rec.Fingerprint)
}

// TestDecodeStickyRejectsGarbage: a node value that is not a record of
// version 1 with valid thread ids is an error, never a panic.
func TestDecodeStickyRejectsGarbage(t *testing.T) {
	for _, v := range []string{``, `[]`, `{"version":2}`, `{"version":1,"assignment":{"t":{"nodash":[0]}}}`, `{"version":1,"assignment":{"t":{"c-x":[0]}}}`} {
		_, _, err := decodeSticky("p", []byte(v))
		require.Error(t, err, "%s", v)
		require.ErrorAs(t, err, new(*zkutil.DecodeError))
	}
}
