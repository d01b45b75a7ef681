package zkassign

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestFingerprintSameSnapshot: members reading the same group (each
// with its own ConsumerID and MyTopicThreadIDs) get the same fingerprint,
// and from the same previous assignment the same one; a group that differs
// in a member, a thread or a partition gets another fingerprint.
func TestFingerprintSameSnapshot(t *testing.T) {
	members := []string{"g_a", "g_b", "g_c"}
	parts := map[string]int{"orders": 12, "audit": 5}
	base := stickyGroup(members, 2, parts)
	previous := mustAssign(t, StickyAssignor{}, base).Flatten()

	grown := stickyGroup(append(slices.Clone(members), "g_d"), 2, parts)
	var fps []string
	var results []Assignment
	for _, me := range append(slices.Clone(members), "g_d") {
		ctx := grown
		ctx.ConsumerID = me
		ctx.MyTopicThreadIDs = map[string][]zkutil.ConsumerThreadID{"orders": threadsOf(me, 2), "audit": threadsOf(me, 2)}
		fp, err := Fingerprint(ctx)
		require.NoError(t, err)
		fps = append(fps, fp)
		ctx.Previous = previous
		results = append(results, mustAssign(t, StickyAssignor{}, ctx))
	}
	for i := range fps {
		require.Equal(t, fps[0], fps[i])
		assertSameAssignment(t, results[i], results[0], "member %d", i)
	}

	fp0, err := Fingerprint(base)
	require.NoError(t, err)
	require.NotEqual(t, fp0, fps[0], "a member more")
	more := stickyGroup(members, 2, map[string]int{"orders": 13, "audit": 5})
	fp1, err := Fingerprint(more)
	require.NoError(t, err)
	require.NotEqual(t, fp0, fp1, "a partition more")
	streams := stickyGroup(members, 3, parts)
	fp2, err := Fingerprint(streams)
	require.NoError(t, err)
	require.NotEqual(t, fp0, fp2, "a thread more")
}
