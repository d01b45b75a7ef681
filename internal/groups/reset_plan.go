package groups

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Errors of PlanReset.
var (
	// ErrNoCommittedOffset: --shift-by for partitions without a committed
	// offset (Kafka refuses these too).
	ErrNoCommittedOffset = errors.New("no committed offset to shift")
	// ErrNotInScope: --from-file names partitions the tool knows nothing
	// about (not in the parts given to PlanReset).
	ErrNotInScope = errors.New("partitions not found")
	// ErrInvalidState: a PartitionState that cannot be, e.g. a log-start
	// offset above the log-end offset, or a partition listed twice.
	ErrInvalidState = errors.New("invalid partition state")
	// ErrNoOffsetForTime: a time-based reset without an OffsetForTime.
	ErrNoOffsetForTime = errors.New("time-based reset needs an OffsetForTime")
)

// PartitionsError reports partitions for which a reset cannot be planned.
type PartitionsError struct {
	// Err is the reason, e.g. ErrNoCommittedOffset or ErrNotInScope.
	Err error
	// Partitions are the partitions concerned, sorted by topic, partition.
	Partitions []TopicPartition
}

// Error implements error.
func (e *PartitionsError) Error() string {
	names := make([]string, len(e.Partitions))
	for i, tp := range e.Partitions {
		names[i] = tp.String()
	}
	return fmt.Sprintf("%v: %s", e.Err, strings.Join(names, ", "))
}

// Unwrap returns the reason.
func (e *PartitionsError) Unwrap() error { return e.Err }

// PartitionState is what the tool knows of one partition before the reset.
type PartitionState struct {
	TopicPartition
	// Current is the group's committed offset, if HasCurrent.
	Current    int64
	HasCurrent bool
	// Earliest and Latest are the log-start and log-end offsets.
	Earliest, Latest int64
}

// OffsetForTime returns the earliest offset whose timestamp is >= ms (Kafka
// ListOffsets by time), or the log-end offset when there is none. It may
// instead return a negative offset for "none"; PlanReset then uses the
// log-end offset and says so in the plan's note, as Kafka warns.
type OffsetForTime func(ctx context.Context, tp TopicPartition, ms int64) (int64, error)

// PlannedOffset is the plan for one partition.
type PlannedOffset struct {
	TopicPartition
	// Current and HasCurrent are the committed offset before the reset.
	Current    int64
	HasCurrent bool
	// Target is the offset to commit.
	Target int64
	// Note explains an adjustment, e.g. "offset 500 is above the log-end
	// offset 120; using 120"; empty when there was none. Kafka logs these as
	// warnings.
	Note string
}

// PlanReset computes the new offset of each partition, following Kafka's
// kafka-consumer-groups.sh --reset-offsets:
//
//   - ResetToEarliest, ResetToLatest: the log-start or log-end offset.
//   - ResetToCurrent: the committed offset, unchanged even if the log no
//     longer holds it (a note says so); without one, the log-end offset.
//   - ResetToOffset, ResetShiftBy, ResetFromFile: the requested offset,
//     clamped to [Earliest, Latest] with a note, as Kafka's range check does.
//     ResetShiftBy fails with a *PartitionsError wrapping ErrNoCommittedOffset
//     naming every partition without a committed offset; a shift that
//     overflows saturates before clamping.
//   - ResetToDatetime, ResetByDuration (now - Duration): byTime at that
//     instant, in milliseconds.
//   - ResetFromFile plans exactly the partitions of spec.File (as Kafka, which
//     ignores --topic then); parts must describe them all, or PlanReset fails
//     with a *PartitionsError wrapping ErrNotInScope. Other modes plan every
//     partition in parts.
//
// Negative offsets in the spec are rejected (see ResetSpec.Validate). The
// plan is sorted by topic, partition. PlanReset calls byTime only for the
// time-based modes, once per partition in order, and returns its first
// error.
func PlanReset(ctx context.Context, spec ResetSpec, now time.Time, parts []PartitionState, byTime OffsetForTime) ([]PlannedOffset, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	states, err := sortedStates(parts)
	if err != nil {
		return nil, err
	}
	if spec.Mode == ResetFromFile {
		states, err = fileScope(states, spec.File)
		if err != nil {
			return nil, err
		}
	}
	var ms int64
	switch spec.Mode {
	case ResetToDatetime:
		ms = spec.Time.UnixMilli()
	case ResetByDuration:
		ms = now.Add(-spec.Duration).UnixMilli()
	case ResetShiftBy:
		var missing []TopicPartition
		for _, st := range states {
			if !st.HasCurrent {
				missing = append(missing, st.TopicPartition)
			}
		}
		if len(missing) > 0 {
			return nil, &PartitionsError{Err: ErrNoCommittedOffset, Partitions: missing}
		}
	}
	if (spec.Mode == ResetToDatetime || spec.Mode == ResetByDuration) && byTime == nil {
		return nil, ErrNoOffsetForTime
	}

	plan := make([]PlannedOffset, 0, len(states))
	for _, st := range states {
		p := PlannedOffset{TopicPartition: st.TopicPartition, Current: st.Current, HasCurrent: st.HasCurrent}
		switch spec.Mode {
		case ResetToEarliest:
			p.Target = st.Earliest
		case ResetToLatest:
			p.Target = st.Latest
		case ResetToCurrent:
			switch {
			case !st.HasCurrent:
				p.Target = st.Latest
				p.Note = fmt.Sprintf("no committed offset; using the log-end offset %d", st.Latest)
			case st.Current < st.Earliest:
				p.Target = st.Current
				p.Note = fmt.Sprintf("committed offset %d is below the log-start offset %d; kept", st.Current, st.Earliest)
			case st.Current > st.Latest:
				p.Target = st.Current
				p.Note = fmt.Sprintf("committed offset %d is above the log-end offset %d; kept", st.Current, st.Latest)
			default:
				p.Target = st.Current
			}
		case ResetToOffset:
			p.Target, p.Note = clamp(spec.Offset, st)
		case ResetShiftBy:
			p.Target, p.Note = clamp(addSaturating(st.Current, spec.Shift), st)
		case ResetFromFile:
			p.Target, p.Note = clamp(spec.File[st.TopicPartition], st)
		case ResetToDatetime, ResetByDuration:
			off, err := byTime(ctx, st.TopicPartition, ms)
			if err != nil {
				return nil, fmt.Errorf("offset for time %s of %s: %w",
					time.UnixMilli(ms).UTC().Format(time.RFC3339Nano), st.TopicPartition, err)
			}
			if off < 0 {
				off = st.Latest
				p.Note = fmt.Sprintf("no message at or after %s; using the log-end offset %d",
					time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z"), off)
			}
			p.Target = off
		}
		plan = append(plan, p)
	}
	return plan, nil
}

// sortedStates checks parts and returns them sorted by topic, partition.
func sortedStates(parts []PartitionState) ([]PartitionState, error) {
	states := slices.Clone(parts)
	slices.SortFunc(states, func(a, b PartitionState) int { return compareTP(a.TopicPartition, b.TopicPartition) })
	for i, st := range states {
		if i > 0 && states[i-1].TopicPartition == st.TopicPartition {
			return nil, fmt.Errorf("%w: %s listed twice", ErrInvalidState, st.TopicPartition)
		}
		if st.Earliest < 0 || st.Latest < st.Earliest {
			return nil, fmt.Errorf("%w: %s has log-start offset %d and log-end offset %d",
				ErrInvalidState, st.TopicPartition, st.Earliest, st.Latest)
		}
	}
	return states, nil
}

// fileScope keeps the states of the partitions in file and fails naming
// those of file that have none.
func fileScope(states []PartitionState, file map[TopicPartition]int64) ([]PartitionState, error) {
	var kept []PartitionState
	known := make(map[TopicPartition]bool, len(states))
	for _, st := range states {
		known[st.TopicPartition] = true
		if _, ok := file[st.TopicPartition]; ok {
			kept = append(kept, st)
		}
	}
	var missing []TopicPartition
	for tp := range file {
		if !known[tp] {
			missing = append(missing, tp)
		}
	}
	if len(missing) > 0 {
		slices.SortFunc(missing, compareTP)
		return nil, &PartitionsError{Err: ErrNotInScope, Partitions: missing}
	}
	return kept, nil
}

// clamp moves off into [st.Earliest, st.Latest], checking the upper bound
// first as Kafka does, and explains any move.
func clamp(off int64, st PartitionState) (int64, string) {
	switch {
	case off > st.Latest:
		return st.Latest, fmt.Sprintf("offset %d is above the log-end offset %d; using %d", off, st.Latest, st.Latest)
	case off < st.Earliest:
		return st.Earliest, fmt.Sprintf("offset %d is below the log-start offset %d; using %d", off, st.Earliest, st.Earliest)
	default:
		return off, ""
	}
}

func addSaturating(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// FileForGroup selects from the entries of an offsets file those of group,
// taking entries without a group (the single-group CSV form) as group's, and
// returns them as a ResetSpec.File.
func FileForGroup(offs []PartitionOffset, group string) map[TopicPartition]int64 {
	file := make(map[TopicPartition]int64)
	for _, po := range offs {
		if po.Group == "" || po.Group == group {
			file[po.TopicPartition] = po.Offset
		}
	}
	return file
}
