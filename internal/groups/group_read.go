package groups

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ListGroups returns the names of the groups under /consumers, sorted: the
// groups of ZooKeeper-based consumers, as Kafka 1.1.1's
// kafka-consumer-groups.sh --zookeeper --list shows them. A cluster without
// /consumers has none.
func ListGroups(ctx context.Context, zk *zksession.Session) ([]string, error) {
	groups, err := zk.Children(ctx, zkutil.ConsumersPath)
	if errors.Is(err, zksession.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	slices.Sort(groups)
	return groups, nil
}

// CheckGroup returns an error wrapping ErrUnknownGroup when
// /consumers/<group> does not exist, and one naming the problem when group
// is not a valid group id.
func CheckGroup(ctx context.Context, zk *zksession.Session, group string) error {
	if err := zkutil.ValidateGroupID(group); err != nil {
		return err
	}
	ok, _, err := zk.Exists(ctx, zkutil.GroupPath(group))
	if err != nil {
		return fmt.Errorf("read group %q: %w", group, err)
	}
	if !ok {
		return fmt.Errorf("%w %q (no %s)", ErrUnknownGroup, group, zkutil.GroupPath(group))
	}
	return nil
}

// ReadCommittedOffsets returns the offsets group has committed to
// ZooKeeper, /consumers/<group>/offsets/<topic>/<partition>: the next
// offset each partition's consumer will read. A stored -1
// (zkutil.NoOffset, "nothing committed", as tools write it) is returned as
// it is. A group without offsets returns an empty map.
//
// Nodes that are not what Kafka writes, such as an offset "abc" or a
// partition named "x", are left out of the map and reported together in a
// *BadNodesError; the map holds everything else. Other errors (ZooKeeper
// unreachable) return a nil map.
func ReadCommittedOffsets(ctx context.Context, zk *zksession.Session, group string) (map[TopicPartition]int64, error) {
	out := map[TopicPartition]int64{}
	topics, err := childrenMaybe(ctx, zk, zkutil.OffsetsPath(group))
	if err != nil {
		return nil, fmt.Errorf("read offsets of group %q: %w", group, err)
	}
	var bad []error
	for _, topic := range topics {
		parts, err := childrenMaybe(ctx, zk, zkutil.OffsetsTopicPath(group, topic))
		if err != nil {
			return nil, fmt.Errorf("read offsets of group %q: %w", group, err)
		}
		for _, name := range parts {
			p, ok := parsePartitionNode(name)
			path := zkutil.OffsetsTopicPath(group, topic) + "/" + name
			if !ok {
				bad = append(bad, &zkutil.DecodeError{Path: path, Err: fmt.Errorf("partition %q is not a partition number", name)})
				continue
			}
			data, _, err := zk.Get(ctx, path)
			if errors.Is(err, zksession.ErrNoNode) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read offsets of group %q: %w", group, err)
			}
			off, err := zkutil.DecodeOffset(path, data)
			if err != nil {
				bad = append(bad, err)
				continue
			}
			out[TopicPartition{Topic: topic, Partition: p}] = off
		}
	}
	return out, badNodes(bad)
}

// ReadOwners returns the owner of each partition group's members have
// claimed, /consumers/<group>/owners/<topic>/<partition>, as the consumer
// thread id stored there ("<consumerId>-<thread>"), and the topics under
// /owners, sorted (Kafka 1.1.1's tools take a group's topics from there).
// Owner nodes whose names are not partition numbers are reported in a
// *BadNodesError, the rest is still returned.
func ReadOwners(ctx context.Context, zk *zksession.Session, group string) (owners map[TopicPartition]string, topics []string, err error) {
	owners = map[TopicPartition]string{}
	topics, err = childrenMaybe(ctx, zk, zkutil.OwnersPath(group))
	if err != nil {
		return nil, nil, fmt.Errorf("read owners of group %q: %w", group, err)
	}
	slices.Sort(topics)
	var bad []error
	for _, topic := range topics {
		parts, err := childrenMaybe(ctx, zk, zkutil.OwnersTopicPath(group, topic))
		if err != nil {
			return nil, nil, fmt.Errorf("read owners of group %q: %w", group, err)
		}
		for _, name := range parts {
			path := zkutil.OwnersTopicPath(group, topic) + "/" + name
			p, ok := parsePartitionNode(name)
			if !ok {
				bad = append(bad, &zkutil.DecodeError{Path: path, Err: fmt.Errorf("partition %q is not a partition number", name)})
				continue
			}
			data, _, err := zk.Get(ctx, path)
			if errors.Is(err, zksession.ErrNoNode) {
				continue // released meanwhile
			}
			if err != nil {
				return nil, nil, fmt.Errorf("read owners of group %q: %w", group, err)
			}
			owners[TopicPartition{Topic: topic, Partition: p}] = string(data)
		}
	}
	return owners, topics, badNodes(bad)
}

// childrenMaybe lists the children of path; a missing path has none.
func childrenMaybe(ctx context.Context, zk *zksession.Session, path string) ([]string, error) {
	c, err := zk.Children(ctx, path)
	if errors.Is(err, zksession.ErrNoNode) {
		return nil, nil
	}
	return c, err
}

// parsePartitionNode reads a partition znode name the way Kafka writes it.
func parsePartitionNode(name string) (int32, bool) {
	n, err := strconv.ParseInt(name, 10, 32)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != name {
		return 0, false
	}
	return int32(n), true
}
