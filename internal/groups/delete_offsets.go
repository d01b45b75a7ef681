package groups

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// AllPartitions, as the partition of an OffsetDeletion, stands for every
// partition of a topic whose partitions could not be known.
const AllPartitions int32 = -1

// OffsetDeletion is the outcome of --delete-offsets for one partition.
type OffsetDeletion struct {
	TopicPartition
	// Err is nil when the offset was deleted (or there was none to
	// delete); otherwise why it was not: ErrSubscribed, ErrUnknownTopic,
	// ErrUnknownPartition, or an error of ZooKeeper or of the broker.
	Err error
}

// DeleteOffsets deletes group's committed offsets in ZooKeeper,
// /consumers/<group>/offsets/<topic>/<partition>, for the partitions of
// topics: each topic's listed partitions, or all of them when its list is
// empty (the partitions in /brokers/topics and those the group has an
// offset for, so that the offsets of a deleted topic can be removed too).
//
// It follows Kafka's group coordinator for OffsetDelete: a group with no
// registered member loses every offset asked for; a group with members
// keeps the offsets of the topics a member subscribes to (by name, or by a
// pattern that matches the topic, or with a registration that cannot be
// read), each reported with ErrSubscribed, and loses the others. A
// partition without an offset counts as deleted, as in Kafka.
//
// It fails as a whole with ErrUnknownGroup when the group does not exist;
// on a ZooKeeper error it returns the outcomes so far with the error. A
// member that registers while the offsets are being deleted cannot be
// stopped by ZooKeeper; when one did and subscribes to a topic whose
// offsets went, the returned error wraps ErrGroupActive and names it, with
// the outcomes.
func DeleteOffsets(ctx context.Context, zk *zksession.Session, group string, topics map[string][]int32) ([]OffsetDeletion, error) {
	if err := CheckGroup(ctx, zk, group); err != nil {
		return nil, err
	}
	members, err := ListMembers(ctx, zk, group)
	if err != nil {
		return nil, err
	}
	subscribed := subscriptions(members)
	var out []OffsetDeletion
	var deletedTopics []string
	for _, topic := range slices.Sorted(maps.Keys(topics)) {
		parts, bad, err := offsetPartitions(ctx, zk, group, topic, topics[topic])
		if err != nil {
			return out, err
		}
		out = append(out, bad...)
		if len(parts) == 0 {
			continue
		}
		if ids := subscribed(topic); len(ids) > 0 {
			for _, p := range parts {
				out = append(out, OffsetDeletion{TopicPartition{Topic: topic, Partition: p},
					fmt.Errorf("%w %q (%s)", ErrSubscribed, topic, strings.Join(ids, ", "))})
			}
			continue
		}
		for _, p := range parts {
			err := zk.Delete(ctx, zkutil.OffsetPath(group, topic, p), -1)
			if errors.Is(err, zksession.ErrNoNode) {
				err = nil
			}
			if err != nil {
				err = fmt.Errorf("delete offset: %w", err)
			}
			out = append(out, OffsetDeletion{TopicPartition{Topic: topic, Partition: p}, err})
		}
		deletedTopics = append(deletedTopics, topic)
		// The topic's node goes when its last offset went; a commit
		// recreating it meanwhile keeps it.
		if err := zk.Delete(ctx, zkutil.OffsetsTopicPath(group, topic), -1); err != nil &&
			!errors.Is(err, zksession.ErrNoNode) && !errors.Is(err, zksession.ErrNotEmpty) {
			return out, fmt.Errorf("delete offsets of topic %q: %w", topic, err)
		}
	}
	slices.SortFunc(out, func(a, b OffsetDeletion) int { return compareTP(a.TopicPartition, b.TopicPartition) })
	return out, lateMembers(ctx, zk, group, members, deletedTopics)
}

// subscriptions returns a function telling which of members subscribe to
// a topic: by name, by a pattern matching it, or with a registration that
// cannot be read (which may subscribe to anything).
func subscriptions(members []Member) func(topic string) []string {
	type sub struct {
		id      string
		static  map[string]int
		filters []*topicfilter.Filter
		unknown bool
	}
	subs := make([]sub, 0, len(members))
	for _, m := range members {
		s := sub{id: m.ID}
		switch {
		case m.Err != nil:
			s.unknown = true
		case m.Registration.Pattern == zkutil.PatternStatic:
			s.static = m.Registration.Subscription
		default:
			for regex := range m.Registration.Subscription {
				f, err := topicfilter.New(m.Registration.Pattern, regex)
				if err != nil {
					s.unknown = true
					continue
				}
				s.filters = append(s.filters, f)
			}
		}
		subs = append(subs, s)
	}
	return func(topic string) []string {
		var ids []string
		for _, s := range subs {
			_, named := s.static[topic]
			matched := slices.ContainsFunc(s.filters, func(f *topicfilter.Filter) bool { return f.Allows(topic, false) })
			if s.unknown || named || matched {
				ids = append(ids, s.id)
			}
		}
		return ids
	}
}

// offsetPartitions resolves the partitions of topic to delete offsets of:
// asked (all when empty). It returns them, and an outcome with an error
// for each that does not exist.
func offsetPartitions(ctx context.Context, zk *zksession.Session, group, topic string, asked []int32) ([]int32, []OffsetDeletion, error) {
	inLog, err := TopicPartitions(ctx, zk, topic)
	if err != nil && !errors.Is(err, ErrUnknownTopic) {
		return nil, nil, err
	}
	unknownTopic := err != nil
	names, err := childrenMaybe(ctx, zk, zkutil.OffsetsTopicPath(group, topic))
	if err != nil {
		return nil, nil, fmt.Errorf("read offsets of group %q: %w", group, err)
	}
	committed := map[int32]bool{}
	for _, n := range names {
		if p, ok := parsePartitionNode(n); ok {
			committed[p] = true
		}
	}
	if len(asked) == 0 {
		all := append(slices.Clone(inLog), slices.Collect(maps.Keys(committed))...)
		slices.Sort(all)
		all = slices.Compact(all)
		if len(all) == 0 {
			return nil, []OffsetDeletion{{TopicPartition{Topic: topic, Partition: AllPartitions}, fmt.Errorf("%w %q", ErrUnknownTopic, topic)}}, nil
		}
		return all, nil, nil
	}
	var parts []int32
	var bad []OffsetDeletion
	for _, p := range slices.Compact(slices.Sorted(slices.Values(asked))) {
		switch {
		case committed[p] || slices.Contains(inLog, p):
			parts = append(parts, p)
		case unknownTopic:
			bad = append(bad, OffsetDeletion{TopicPartition{Topic: topic, Partition: p}, fmt.Errorf("%w %q", ErrUnknownTopic, topic)})
		default:
			bad = append(bad, OffsetDeletion{TopicPartition{Topic: topic, Partition: p}, fmt.Errorf("%w: %s-%d", ErrUnknownPartition, topic, p)})
		}
	}
	return parts, bad, nil
}

// lateMembers returns an error wrapping ErrGroupActive when a member that
// was not in before registered and subscribes to one of topics.
func lateMembers(ctx context.Context, zk *zksession.Session, group string, before []Member, topics []string) error {
	if len(topics) == 0 {
		return nil
	}
	after, err := ListMembers(ctx, zk, group)
	if err != nil {
		return fmt.Errorf("check members after the delete: %w", err)
	}
	var late []Member
	for _, m := range after {
		if !slices.ContainsFunc(before, func(b Member) bool { return b.ID == m.ID }) {
			late = append(late, m)
		}
	}
	subscribed := subscriptions(late)
	var errs []error
	for _, t := range topics {
		if ids := subscribed(t); len(ids) > 0 {
			errs = append(errs, fmt.Errorf("%w: %s registered during the delete and subscribes to topic %q, whose offsets were deleted",
				ErrGroupActive, strings.Join(ids, ", "), t))
		}
	}
	return errors.Join(errs...)
}

// PrintOffsetDeletions writes one line per outcome under the header
// TOPIC PARTITION STATUS: "Deleted", or "Error: " and why not. A whole
// topic whose partitions could not be known shows "-" as its partition.
func PrintOffsetDeletions(w io.Writer, rows []OffsetDeletion) error {
	ew := &errWriter{w: w}
	format := "%-30s %-15s %s\n"
	ew.printf("\n"+format, "TOPIC", "PARTITION", "STATUS")
	for _, r := range rows {
		p := missing
		if r.Partition != AllPartitions {
			p = strconv.Itoa(int(r.Partition))
		}
		status := "Deleted"
		if r.Err != nil {
			status = "Error: " + r.Err.Error()
		}
		ew.printf(format, r.Topic, p, status)
	}
	return ew.err
}
