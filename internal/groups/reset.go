package groups

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ResetScope is the set of partitions a reset covers: every topic of the
// group (AllTopics), or the listed topics, each with all its partitions
// (nil) or the listed ones. ResetFromFile ignores it and takes the file's
// partitions, as Kafka does.
type ResetScope struct {
	AllTopics bool
	Topics    map[string][]int32
}

// PlanGroupReset plans a reset of group's committed offsets: it checks that
// the group has no registered member (ErrGroupActive), resolves the scope
// against the topics in ZooKeeper (ErrUnknownTopic, ErrUnknownPartition),
// reads the committed offsets and asks the leaders for the log start and
// end of every partition in scope, then runs PlanReset. It writes nothing.
//
// A group that does not exist yet gets the offsets planned for the topics
// the scope names or the file lists (a new group made to start at chosen
// offsets, or a deleted one restored from a backup); with AllTopics it
// fails with ErrUnknownGroup, having no topics of its own. Modes that need
// a committed offset (ResetShiftBy) fail for want of one. A garbage committed offset in
// scope fails ResetToCurrent and ResetShiftBy, which need it; the other
// modes overwrite it. Any partition whose log offsets cannot be had fails
// the whole plan.
func PlanGroupReset(ctx context.Context, zk *zksession.Session, lo *LogOffsets, group string, scope ResetScope, spec ResetSpec, now time.Time) ([]PlannedOffset, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	err := CheckInactive(ctx, zk, group)
	switch {
	case !errors.Is(err, ErrUnknownGroup):
	case spec.Mode == ResetFromFile || !scope.AllTopics:
		err = nil
	default:
		err = fmt.Errorf("%w; name the topics with --topic to give a new group offsets", err)
	}
	if err != nil {
		return nil, err
	}
	tps, err := resetPartitions(ctx, zk, group, scope, spec)
	if err != nil {
		return nil, err
	}
	committed, err := ReadCommittedOffsets(ctx, zk, group)
	var bad *BadNodesError
	if err != nil && !errors.As(err, &bad) {
		return nil, err
	}
	if bad != nil && (spec.Mode == ResetToCurrent || spec.Mode == ResetShiftBy) {
		return nil, fmt.Errorf("--%s needs the committed offsets, and some cannot be read: %w", spec.Mode, err)
	}
	earliest, err := lo.Earliest(ctx, tps)
	if err != nil {
		return nil, fmt.Errorf("cannot plan the reset without the log start offsets: %w", err)
	}
	latest, err := lo.Latest(ctx, tps)
	if err != nil {
		return nil, fmt.Errorf("cannot plan the reset without the log end offsets: %w", err)
	}
	states := make([]PartitionState, 0, len(tps))
	for _, tp := range tps {
		st := PartitionState{TopicPartition: tp, Earliest: earliest[tp], Latest: latest[tp]}
		if cur, ok := committed[tp]; ok && cur != zkutil.NoOffset {
			st.Current, st.HasCurrent = cur, true
		}
		states = append(states, st)
	}
	return PlanReset(ctx, spec, now, states, lo.ForTime)
}

// resetPartitions returns the partitions in scope, sorted, checking that
// each exists.
func resetPartitions(ctx context.Context, zk *zksession.Session, group string, scope ResetScope, spec ResetSpec) ([]TopicPartition, error) {
	want := map[string][]int32{}
	switch {
	case spec.Mode == ResetFromFile:
		for tp := range spec.File {
			want[tp.Topic] = append(want[tp.Topic], tp.Partition)
		}
		if len(want) == 0 {
			return nil, fmt.Errorf("the file has no offsets for group %q", group)
		}
	case scope.AllTopics:
		topics, err := groupTopics(ctx, zk, group)
		if err != nil {
			return nil, err
		}
		if len(topics) == 0 {
			return nil, fmt.Errorf("group %q has no topics (no offsets or owners); name them with --topic", group)
		}
		for _, t := range topics {
			want[t] = nil
		}
	default:
		want = scope.Topics
	}
	var out []TopicPartition
	for topic, parts := range want {
		all, err := TopicPartitions(ctx, zk, topic)
		if err != nil {
			return nil, err
		}
		if parts == nil {
			parts = all
		}
		for _, p := range parts {
			if !slices.Contains(all, p) {
				return nil, fmt.Errorf("%w: %s-%d (topic %q has partitions 0..%d)", ErrUnknownPartition, topic, p, topic, len(all)-1)
			}
			out = append(out, TopicPartition{Topic: topic, Partition: p})
		}
	}
	slices.SortFunc(out, compareTP)
	return slices.Compact(out), nil
}

// CommitPlan writes the planned offsets of group to ZooKeeper,
// /consumers/<group>/offsets/<topic>/<partition>, creating nodes as needed.
// It checks again, just before writing, that no member has registered
// meanwhile (ErrGroupActive).
func CommitPlan(ctx context.Context, zk *zksession.Session, group string, plan []PlannedOffset) error {
	if err := checkInactive(ctx, zk, group); err != nil {
		return err
	}
	for i, p := range plan {
		if err := zk.SetOrCreate(ctx, zkutil.OffsetPath(group, p.Topic, p.Partition), zkutil.EncodeOffset(p.Target)); err != nil {
			return fmt.Errorf("wrote %d of %d offsets of group %q, then failed at %s: %w", i, len(plan), group, p.TopicPartition, err)
		}
	}
	return nil
}

// ExportOffsets returns group's committed offsets as PartitionOffset
// entries with Group set, sorted, for WriteCSV (clear Group first) or
// WriteZkOffsets. It fails on unknown groups and on garbage offsets, so that
// a backup is never silently incomplete; partitions whose offset is -1
// (nothing committed) are left out and returned in skipped.
func ExportOffsets(ctx context.Context, zk *zksession.Session, group string) (offs []PartitionOffset, skipped []TopicPartition, err error) {
	if err := CheckGroup(ctx, zk, group); err != nil {
		return nil, nil, err
	}
	committed, err := ReadCommittedOffsets(ctx, zk, group)
	if err != nil {
		return nil, nil, err
	}
	for tp, off := range committed {
		if off == zkutil.NoOffset {
			skipped = append(skipped, tp)
			continue
		}
		offs = append(offs, PartitionOffset{Group: group, TopicPartition: tp, Offset: off})
	}
	slices.SortFunc(offs, comparePO)
	slices.SortFunc(skipped, compareTP)
	return offs, skipped, nil
}
