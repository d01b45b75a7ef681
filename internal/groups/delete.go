package groups

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// checkInactive fails with ErrGroupActive when group has registered
// members (Kafka's AdminUtils.isConsumerGroupActive).
func checkInactive(ctx context.Context, zk *zksession.Session, group string) error {
	ids, err := childrenMaybe(ctx, zk, zkutil.ConsumerIDsPath(group))
	if err != nil {
		return fmt.Errorf("list members of group %q: %w", group, err)
	}
	if len(ids) > 0 {
		slices.Sort(ids)
		return fmt.Errorf("%w (%s): %s", ErrGroupActive, group, strings.Join(ids, ", "))
	}
	return nil
}

// CheckInactive returns nil when group exists and has no registered
// member, an error wrapping ErrUnknownGroup when it does not exist and one
// wrapping ErrGroupActive, naming the members, when it has members.
func CheckInactive(ctx context.Context, zk *zksession.Session, group string) error {
	if err := CheckGroup(ctx, zk, group); err != nil {
		return err
	}
	return checkInactive(ctx, zk, group)
}

// DeleteGroup deletes /consumers/<group> with its offsets and owners,
// refusing with ErrGroupActive while members are registered and with
// ErrUnknownGroup when there is no such group (Kafka 1.1.1's
// kafka-consumer-groups.sh --zookeeper --delete --group).
//
// The registry of members (/ids) is deleted first, and only while empty, so
// that a member registering after the check makes the delete fail instead
// of losing its group's offsets from under it.
func DeleteGroup(ctx context.Context, zk *zksession.Session, group string) error {
	if err := CheckInactive(ctx, zk, group); err != nil {
		return err
	}
	ids := zkutil.ConsumerIDsPath(group)
	if err := zk.Delete(ctx, ids, -1); err != nil && !errors.Is(err, zksession.ErrNoNode) {
		if errors.Is(err, zksession.ErrNotEmpty) {
			return fmt.Errorf("%w: a member of group %q registered during the delete", ErrGroupActive, group)
		}
		return fmt.Errorf("delete group %q: %w", group, err)
	}
	if err := deleteRecursive(ctx, zk, zkutil.GroupPath(group)); err != nil {
		return fmt.Errorf("delete group %q: %w", group, err)
	}
	return nil
}

// DeleteGroupTopic deletes group's offsets and owners of one topic,
// /consumers/<group>/offsets/<topic> and /owners/<topic>, refusing like
// DeleteGroup. As in Kafka 1.1.1, when that topic is the group's only one
// the whole group is deleted; wholeGroup then reports true. It fails with
// ErrUnknownTopic when the group has neither offsets nor owners for topic.
func DeleteGroupTopic(ctx context.Context, zk *zksession.Session, group, topic string) (wholeGroup bool, err error) {
	if err := CheckInactive(ctx, zk, group); err != nil {
		return false, err
	}
	topics, err := groupTopics(ctx, zk, group)
	if err != nil {
		return false, err
	}
	if !slices.Contains(topics, topic) {
		return false, fmt.Errorf("%w: group %q has no offsets or owners for topic %q", ErrUnknownTopic, group, topic)
	}
	if len(topics) == 1 {
		return true, DeleteGroup(ctx, zk, group)
	}
	for _, p := range []string{zkutil.OwnersTopicPath(group, topic), zkutil.OffsetsTopicPath(group, topic)} {
		if err := deleteRecursive(ctx, zk, p); err != nil {
			return false, fmt.Errorf("delete topic %q of group %q: %w", topic, group, err)
		}
	}
	return false, nil
}

// DeleteTopicFromGroups deletes topic's offsets and owners from every
// group that has offsets for it and no registered member (Kafka 1.1.1's
// --delete --topic without --group). It returns the groups it cleaned and
// those it skipped because they have members.
func DeleteTopicFromGroups(ctx context.Context, zk *zksession.Session, topic string) (deleted, active []string, err error) {
	all, err := ListGroups(ctx, zk)
	if err != nil {
		return nil, nil, err
	}
	for _, g := range all {
		topics, err := childrenMaybe(ctx, zk, zkutil.OffsetsPath(g))
		if err != nil {
			return deleted, active, fmt.Errorf("read offsets of group %q: %w", g, err)
		}
		if !slices.Contains(topics, topic) {
			continue
		}
		_, err = DeleteGroupTopic(ctx, zk, g, topic)
		switch {
		case errors.Is(err, ErrGroupActive):
			active = append(active, g)
		case err != nil:
			return deleted, active, err
		default:
			deleted = append(deleted, g)
		}
	}
	return deleted, active, nil
}

// groupTopics returns the topics under a group's /owners and /offsets,
// sorted and without duplicates.
func groupTopics(ctx context.Context, zk *zksession.Session, group string) ([]string, error) {
	var out []string
	for _, p := range []string{zkutil.OwnersPath(group), zkutil.OffsetsPath(group)} {
		c, err := childrenMaybe(ctx, zk, p)
		if err != nil {
			return nil, fmt.Errorf("read topics of group %q: %w", group, err)
		}
		out = append(out, c...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// deleteRecursive deletes path and everything below it, children first.
// A node already gone is not an error.
func deleteRecursive(ctx context.Context, zk *zksession.Session, path string) error {
	children, err := childrenMaybe(ctx, zk, path)
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := deleteRecursive(ctx, zk, path+"/"+c); err != nil {
			return err
		}
	}
	if err := zk.Delete(ctx, path, -1); err != nil && !errors.Is(err, zksession.ErrNoNode) {
		return err
	}
	return nil
}
