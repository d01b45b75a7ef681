package groups

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Three partitions: b-0 committed inside the log, a-1 without a committed
// offset, a-0 committed below the log-start (retention deleted it). Given out
// of order: plans come back sorted.
var testParts = []PartitionState{
	{TopicPartition: TopicPartition{Topic: "b", Partition: 0}, Current: 50, HasCurrent: true, Earliest: 10, Latest: 100},
	{TopicPartition: TopicPartition{Topic: "a", Partition: 1}, Earliest: 0, Latest: 120},
	{TopicPartition: TopicPartition{Topic: "a", Partition: 0}, Current: 3, HasCurrent: true, Earliest: 5, Latest: 5},
}

// planned abbreviates a PlannedOffset for the table below.
type planned struct {
	tp     TopicPartition
	target int64
	note   string
}

func TestPlanReset(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		spec  ResetSpec
		parts []PartitionState
		want  []planned
	}{
		{"to-earliest", ResetSpec{Mode: ResetToEarliest}, testParts, []planned{
			{tp("a", 0), 5, ""}, {tp("a", 1), 0, ""}, {tp("b", 0), 10, ""}}},
		{"to-latest", ResetSpec{Mode: ResetToLatest}, testParts, []planned{
			{tp("a", 0), 5, ""}, {tp("a", 1), 120, ""}, {tp("b", 0), 100, ""}}},
		{"to-current", ResetSpec{Mode: ResetToCurrent}, testParts, []planned{
			{tp("a", 0), 3, "committed offset 3 is below the log-start offset 5; kept"},
			{tp("a", 1), 120, "no committed offset; using the log-end offset 120"},
			{tp("b", 0), 50, ""}}},
		{"to-current above the log", ResetSpec{Mode: ResetToCurrent}, []PartitionState{
			{TopicPartition: tp("t", 0), Current: 9, HasCurrent: true, Earliest: 0, Latest: 7}}, []planned{
			{tp("t", 0), 9, "committed offset 9 is above the log-end offset 7; kept"}}},
		{"to-offset in range and clamped", ResetSpec{Mode: ResetToOffset, Offset: 20}, testParts, []planned{
			{tp("a", 0), 5, "offset 20 is above the log-end offset 5; using 5"},
			{tp("a", 1), 20, ""},
			{tp("b", 0), 20, ""}}},
		{"to-offset 0 below log-start", ResetSpec{Mode: ResetToOffset, Offset: 0}, testParts, []planned{
			{tp("a", 0), 5, "offset 0 is below the log-start offset 5; using 5"},
			{tp("a", 1), 0, ""},
			{tp("b", 0), 10, "offset 0 is below the log-start offset 10; using 10"}}},
		{"to-offset at the bounds", ResetSpec{Mode: ResetToOffset, Offset: 100}, []PartitionState{
			{TopicPartition: tp("t", 0), Earliest: 100, Latest: 100}}, []planned{{tp("t", 0), 100, ""}}},
		{"shift-by forward", ResetSpec{Mode: ResetShiftBy, Shift: 60}, testParts[:1], []planned{
			{tp("b", 0), 100, "offset 110 is above the log-end offset 100; using 100"}}},
		{"shift-by backward", ResetSpec{Mode: ResetShiftBy, Shift: -45}, testParts[:1], []planned{
			{tp("b", 0), 10, "offset 5 is below the log-start offset 10; using 10"}}},
		{"shift-by zero", ResetSpec{Mode: ResetShiftBy}, testParts[:1], []planned{{tp("b", 0), 50, ""}}},
		{"shift-by saturates", ResetSpec{Mode: ResetShiftBy, Shift: math.MaxInt64}, testParts[:1], []planned{
			{tp("b", 0), 100, "offset 9223372036854775807 is above the log-end offset 100; using 100"}}},
		{"shift-by far down", ResetSpec{Mode: ResetShiftBy, Shift: math.MinInt64}, testParts[:1], []planned{
			{tp("b", 0), 10, "offset -9223372036854775758 is below the log-start offset 10; using 10"}}},
		{"from-file", ResetSpec{Mode: ResetFromFile, File: map[TopicPartition]int64{tp("b", 0): 500, tp("a", 1): 7}}, testParts, []planned{
			{tp("a", 1), 7, ""},
			{tp("b", 0), 100, "offset 500 is above the log-end offset 100; using 100"}}},
		{"from-file empty", ResetSpec{Mode: ResetFromFile}, testParts, []planned{}},
		{"no partitions", ResetSpec{Mode: ResetToLatest}, nil, []planned{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := PlanReset(context.Background(), tc.spec, now, tc.parts, nil)
			require.NoError(t, err)
			require.Equal(t, tc.want, abbreviate(plan))
			byTP := map[TopicPartition]PartitionState{}
			for _, st := range tc.parts {
				byTP[st.TopicPartition] = st
			}
			for _, p := range plan {
				st := byTP[p.TopicPartition]
				require.Equal(t, st.Current, p.Current)
				require.Equal(t, st.HasCurrent, p.HasCurrent)
			}
		})
	}
}

func abbreviate(plan []PlannedOffset) []planned {
	out := []planned{}
	for _, p := range plan {
		out = append(out, planned{p.TopicPartition, p.Target, p.Note})
	}
	return out
}

func TestPlanResetByTime(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := time.Date(2026, 11, 30, 10, 30, 0, 250e6, time.UTC)
	type call struct {
		tp TopicPartition
		ms int64
	}
	var calls []call
	byTime := func(_ context.Context, tp TopicPartition, ms int64) (int64, error) {
		calls = append(calls, call{tp, ms})
		switch tp {
		case TopicPartition{Topic: "a", Partition: 1}:
			return -1, nil // no message that late
		case TopicPartition{Topic: "a", Partition: 0}:
			return 5, nil // the log-end, as the contract also allows
		}
		return 42, nil
	}
	want := []planned{
		{tp("a", 0), 5, ""},
		{tp("a", 1), 120, "no message at or after 2026-11-30T10:30:00.250Z; using the log-end offset 120"},
		{tp("b", 0), 42, ""},
	}

	plan, err := PlanReset(context.Background(), ResetSpec{Mode: ResetToDatetime, Time: at}, now, testParts, byTime)
	require.NoError(t, err)
	require.Equal(t, want, abbreviate(plan))
	require.Equal(t, []call{{tp("a", 0), at.UnixMilli()}, {tp("a", 1), at.UnixMilli()}, {tp("b", 0), at.UnixMilli()}}, calls)

	calls = nil
	d, err := ParseISODuration("PT1H29M59.75S")
	require.NoError(t, err)
	plan, err = PlanReset(context.Background(), ResetSpec{Mode: ResetByDuration, Duration: d}, now, testParts, byTime)
	require.NoError(t, err)
	require.Equal(t, want, abbreviate(plan))
	require.Equal(t, at.UnixMilli(), calls[0].ms, "now minus the duration")

	calls = nil
	_, err = PlanReset(context.Background(), ResetSpec{Mode: ResetByDuration, Duration: -time.Hour}, now, testParts[:1], byTime)
	require.NoError(t, err)
	require.Equal(t, now.Add(time.Hour).UnixMilli(), calls[0].ms, "a negative duration points into the future, as in Kafka")

	boom := errors.New("boom")
	_, err = PlanReset(context.Background(), ResetSpec{Mode: ResetToDatetime, Time: at}, now, testParts,
		func(context.Context, TopicPartition, int64) (int64, error) { return 0, boom })
	require.ErrorIs(t, err, boom)
	require.Contains(t, err.Error(), "a-0")

	_, err = PlanReset(context.Background(), ResetSpec{Mode: ResetToDatetime, Time: at}, now, testParts, nil)
	require.ErrorIs(t, err, ErrNoOffsetForTime)
}

func TestPlanResetErrors(t *testing.T) {
	ctx := context.Background()
	now := time.Now()

	_, err := PlanReset(ctx, ResetSpec{Mode: ResetShiftBy, Shift: 1}, now, append(testParts, PartitionState{
		TopicPartition: tp("a", 2), Latest: 1}), nil)
	require.ErrorIs(t, err, ErrNoCommittedOffset)
	var pe *PartitionsError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, []TopicPartition{tp("a", 1), tp("a", 2)}, pe.Partitions)
	require.Equal(t, "no committed offset to shift: a-1, a-2", err.Error())

	_, err = PlanReset(ctx, ResetSpec{Mode: ResetFromFile, File: map[TopicPartition]int64{
		tp("zz", 0): 1, tp("b", 0): 1, tp("b", 7): 1}}, now, testParts, nil)
	require.ErrorIs(t, err, ErrNotInScope)
	require.ErrorAs(t, err, &pe)
	require.Equal(t, []TopicPartition{tp("b", 7), tp("zz", 0)}, pe.Partitions)

	_, err = PlanReset(ctx, ResetSpec{Mode: ResetToOffset, Offset: -1}, now, testParts, nil)
	require.ErrorIs(t, err, ErrNegativeOffset)
	_, err = PlanReset(ctx, ResetSpec{Mode: ResetFromFile, File: map[TopicPartition]int64{tp("b", 0): -1}}, now, testParts, nil)
	require.ErrorIs(t, err, ErrNegativeOffset)
	_, err = PlanReset(ctx, ResetSpec{}, now, testParts, nil)
	require.ErrorIs(t, err, ErrUnknownMode)

	for _, parts := range [][]PartitionState{
		{testParts[0], testParts[0]},
		{{TopicPartition: tp("t", 0), Earliest: 5, Latest: 4}},
		{{TopicPartition: tp("t", 0), Earliest: -1, Latest: 4}},
	} {
		_, err = PlanReset(ctx, ResetSpec{Mode: ResetToLatest}, now, parts, nil)
		require.ErrorIs(t, err, ErrInvalidState)
	}
}

func TestPlanResetDoesNotReorderInput(t *testing.T) {
	parts := append([]PartitionState(nil), testParts...)
	_, err := PlanReset(context.Background(), ResetSpec{Mode: ResetToLatest}, time.Now(), parts, nil)
	require.NoError(t, err)
	require.Equal(t, testParts, parts)
}

func TestFileForGroup(t *testing.T) {
	offs := []PartitionOffset{po("", "t", 0, 1), po("g", "t", 1, 2), po("h", "t", 2, 3)}
	require.Equal(t, map[TopicPartition]int64{tp("t", 0): 1, tp("t", 1): 2}, FileForGroup(offs, "g"))
	require.Empty(t, FileForGroup(offs[1:], "x"))
}

// A file read back from WriteCSV plans exactly its offsets when they are in
// range.
func TestCSVToPlan(t *testing.T) {
	offs, err := ReadCSV(bytesReader(mustRead(t, "offsets_single.csv")))
	require.NoError(t, err)
	var parts []PartitionState
	for _, o := range offs {
		parts = append(parts, PartitionState{TopicPartition: o.TopicPartition, Latest: 1000})
	}
	plan, err := PlanReset(context.Background(), ResetSpec{Mode: ResetFromFile, File: FileForGroup(offs, "billing")}, time.Now(), parts, nil)
	require.NoError(t, err)
	require.Len(t, plan, len(offs))
	for i, p := range plan {
		require.Equal(t, offs[i].TopicPartition, p.TopicPartition)
		require.Equal(t, offs[i].Offset, p.Target)
		require.Empty(t, p.Note)
	}
}
