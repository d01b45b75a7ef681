package groups

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// Group states, as --describe --state shows them. Kafka's coordinator has
// more; a ZooKeeper group has only what its znodes tell.
const (
	// StateEmpty: no member is registered.
	StateEmpty = "Empty"
	// StateStable: members are registered and each partition of the
	// topics they subscribe to is owned by one of them.
	StateStable = "Stable"
	// StateRebalancing: members are registered but some partition is
	// unowned or owned by a consumer that is no longer registered, as
	// during a rebalance (Kafka's PreparingRebalance).
	StateRebalancing = "Rebalancing"
)

// States are the states of a ZooKeeper group, in the order --list
// --state names them.
var States = []string{StateEmpty, StateStable, StateRebalancing}

// PartitionRow is one partition of a group's topics: its committed offset,
// its log end and its owner.
type PartitionRow struct {
	TopicPartition
	// Current is the committed offset; HasCurrent is false when there is
	// none (or it is unreadable, see Description.Problems).
	Current    int64
	HasCurrent bool
	// LogEnd is the log end offset; HasLogEnd is false when the leader
	// could not be asked.
	LogEnd    int64
	HasLogEnd bool
	// Owner is the consumer id owning the partition ("" if none) and
	// OwnerThread the owner znode's value ("<consumerId>-<thread>").
	Owner, OwnerThread string
}

// Lag returns LogEnd - Current when both are known and Current is not -1,
// as Kafka computes it.
func (r PartitionRow) Lag() (int64, bool) {
	if !r.HasCurrent || !r.HasLogEnd || r.Current == zkutil.NoOffset {
		return 0, false
	}
	return r.LogEnd - r.Current, true
}

// Description is what --describe shows of a group.
type Description struct {
	Group string
	// Rows has one row per partition of the group's topics (those under
	// /owners and /offsets), sorted by topic and partition.
	Rows []PartitionRow
	// Members are the registered members, sorted by id.
	Members []Member
	// Owned counts each member's partitions.
	Owned map[string]int
	// State is StateEmpty, StateStable or StateRebalancing.
	State string
	// Problems are what could not be read: garbage znodes, partitions
	// without a reachable leader, topics that no longer exist. The rest of
	// the description is still valid.
	Problems []error
}

// DescribeGroup reads group's offsets, owners and members from ZooKeeper
// and the log end offsets of its partitions from the brokers (lo; nil skips
// them). It fails with ErrUnknownGroup when the group does not exist and on
// ZooKeeper errors; unreadable parts go to Problems.
//
// The group's topics are those with a node under /consumers/<group>/owners
// (where Kafka 1.1.1's tool looks) or /consumers/<group>/offsets (so that
// offsets imported without owners show too); their partitions come from
// /brokers/topics, plus any partition with a committed offset.
func DescribeGroup(ctx context.Context, zk *zksession.Session, lo *LogOffsets, group string) (*Description, error) {
	if err := CheckGroup(ctx, zk, group); err != nil {
		return nil, err
	}
	d := &Description{Group: group, Owned: map[string]int{}}
	offsets, err := ReadCommittedOffsets(ctx, zk, group)
	if err != nil && offsets == nil {
		return nil, err
	}
	d.addProblem(err)
	owners, ownerTopics, err := ReadOwners(ctx, zk, group)
	if err != nil && owners == nil {
		return nil, err
	}
	d.addProblem(err)
	if d.Members, err = ListMembers(ctx, zk, group); err != nil {
		return nil, err
	}
	for _, m := range d.Members {
		if m.Err != nil {
			d.Problems = append(d.Problems, fmt.Errorf("member %s: %w", m.ID, m.Err))
		}
	}

	topicSet := map[string]bool{}
	for _, t := range ownerTopics {
		topicSet[t] = true
	}
	for tp := range offsets {
		topicSet[tp.Topic] = true
	}
	partSet := map[TopicPartition]bool{}
	for tp := range offsets {
		partSet[tp] = true
	}
	for t := range topicSet {
		parts, err := TopicPartitions(ctx, zk, t)
		if errors.Is(err, ErrUnknownTopic) {
			d.Problems = append(d.Problems, fmt.Errorf("group %q has offsets or owners for topic %q, which does not exist", group, t))
			continue
		}
		if err != nil {
			d.addProblem(err)
			continue
		}
		for _, p := range parts {
			partSet[TopicPartition{Topic: t, Partition: p}] = true
		}
	}
	tps := make([]TopicPartition, 0, len(partSet))
	for tp := range partSet {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, compareTP)

	var ends map[TopicPartition]int64
	if lo != nil && len(tps) > 0 {
		ends, err = lo.Latest(ctx, tps)
		d.addProblem(err)
	}
	for _, tp := range tps {
		r := PartitionRow{TopicPartition: tp}
		r.Current, r.HasCurrent = offsets[tp]
		r.LogEnd, r.HasLogEnd = ends[tp]
		if th, ok := owners[tp]; ok {
			r.OwnerThread = th
			if id, err := zkutil.ParseConsumerThreadID(th); err == nil {
				r.Owner = id.ConsumerID
			} else {
				r.Owner = th
			}
			d.Owned[r.Owner]++
		}
		d.Rows = append(d.Rows, r)
	}
	d.State = groupState(d)
	return d, nil
}

// groupState tells Empty (no member), Stable or Rebalancing. The topics the
// members consume are their static subscriptions, plus, when a member
// subscribes by pattern, every topic with an owned partition; a group is
// Stable when each partition of those topics is owned by a registered
// member and no partition is owned by anyone else. Topics the group
// consumed once but no member subscribes to any more do not count.
func groupState(d *Description) string {
	if len(d.Members) == 0 {
		return StateEmpty
	}
	registered := map[string]bool{}
	consumed := map[string]bool{}
	wildcard := false
	for _, m := range d.Members {
		registered[m.ID] = true
		if m.Err != nil {
			continue
		}
		if m.Registration.Pattern != zkutil.PatternStatic {
			wildcard = true
			continue
		}
		for t := range m.Registration.Subscription {
			consumed[t] = true
		}
	}
	if wildcard {
		for _, r := range d.Rows {
			if r.Owner != "" {
				consumed[r.Topic] = true
			}
		}
	}
	for _, r := range d.Rows {
		if r.Owner != "" && !registered[r.Owner] {
			return StateRebalancing
		}
		if consumed[r.Topic] && r.Owner == "" {
			return StateRebalancing
		}
	}
	return StateStable
}

// IdleMembers returns the registered members that own no partition, in id
// order (Kafka lists them after the partitions, with "-" for the rest).
func (d *Description) IdleMembers() []Member {
	var out []Member
	for _, m := range d.Members {
		if d.Owned[m.ID] == 0 {
			out = append(out, m)
		}
	}
	return out
}

func (d *Description) addProblem(err error) {
	if err == nil {
		return
	}
	var bad *BadNodesError
	if errors.As(err, &bad) {
		d.Problems = append(d.Problems, bad.Errs...)
		return
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		d.Problems = append(d.Problems, j.Unwrap()...)
		return
	}
	d.Problems = append(d.Problems, err)
}
