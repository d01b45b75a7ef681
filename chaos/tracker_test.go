package chaos

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTrackerFollowsIncrementalAssignments: under a cooperative protocol a
// continuing generation tells the listener only what it gains; the
// partitions it keeps stay assigned (the kafka-cooperative topology once
// failed its owner check because the tracker took the last report for the
// whole assignment). Releases still take partitions away, and an eager
// member, which releases everything first, ends with its new set.
func TestTrackerFollowsIncrementalAssignments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m0.0.jsonl")
	w, err := createLog(path)
	require.NoError(t, err)
	defer w.Close()
	trk := newTracker(slog.New(slog.DiscardHandler))
	trk.follow("m0.0", path)
	step := func(kind string, parts map[string][]int32) {
		w.Write(Record{Kind: kind, Parts: parts})
		require.NoError(t, w.Flush())
		trk.poll()
	}
	set := func(tps ...topicPartition) map[topicPartition]bool {
		out := map[topicPartition]bool{}
		for _, tp := range tps {
			out[tp] = true
		}
		return out
	}
	step(RecAssign, map[string][]int32{"t": {0, 1, 2, 3}})
	step(RecRelease, map[string][]int32{"t": {2, 3}}) // cooperative: gives two up
	step(RecAssign, map[string][]int32{"u": {0}})     // and gains one
	got, ok := trk.assignment("m0.0")
	require.True(t, ok)
	require.Equal(t, set(topicPartition{"t", 0}, topicPartition{"t", 1}, topicPartition{"u", 0}), got)

	step(RecRelease, map[string][]int32{"t": {0, 1}, "u": {0}}) // eager: all of it
	step(RecAssign, map[string][]int32{"t": {3}})
	got, _ = trk.assignment("m0.0")
	require.Equal(t, set(topicPartition{"t", 3}), got)
}
