package rebalance

import (
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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

// TestStickyAgreementSameSnapshot: members reading the same group (each
// with its own ConsumerID and MyTopicThreadIDs) get the same fingerprint,
// and from the same node value the same assignment; a group that differs
// in a member, a thread or a partition gets another fingerprint.
func TestStickyAgreementSameSnapshot(t *testing.T) {
	members := []string{"g_a", "g_b", "g_c"}
	parts := map[string]int{"orders": 12, "audit": 5}
	base := stickyGroup(members, 2, parts)
	first := mustAssign(t, StickyAssignor{}, base)
	node, err := encodeSticky(first, 7, "old")
	require.NoError(t, err)
	_, previous, err := decodeSticky("p", node)
	require.NoError(t, err)
	require.Equal(t, flatten(first), previous)

	grown := stickyGroup(append(slices.Clone(members), "g_d"), 2, parts)
	var fps []string
	var results []Assignment
	for _, me := range append(slices.Clone(members), "g_d") {
		ctx := grown
		ctx.ConsumerID = me
		ctx.MyTopicThreadIDs = map[string][]zkutil.ConsumerThreadID{"orders": threadsOf(me, 2), "audit": threadsOf(me, 2)}
		fp, err := fingerprint(ctx)
		require.NoError(t, err)
		fps = append(fps, fp)
		_, prev, err := decodeSticky("p", node)
		require.NoError(t, err)
		ctx.Previous = prev
		results = append(results, mustAssign(t, StickyAssignor{}, ctx))
	}
	for i := range fps {
		require.Equal(t, fps[0], fps[i])
		assertSameAssignment(t, results[i], results[0], "member %d", i)
	}

	fp0, err := fingerprint(base)
	require.NoError(t, err)
	require.NotEqual(t, fp0, fps[0], "a member more")
	more := stickyGroup(members, 2, map[string]int{"orders": 13, "audit": 5})
	fp1, err := fingerprint(more)
	require.NoError(t, err)
	require.NotEqual(t, fp0, fp1, "a partition more")
	streams := stickyGroup(members, 3, parts)
	fp2, err := fingerprint(streams)
	require.NoError(t, err)
	require.NotEqual(t, fp0, fp2, "a thread more")
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
