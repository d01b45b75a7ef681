package chaos

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// stickyNode is a sticky group's agreed assignment, the node
// /consumers/<group>/sticky_assignment its members write and follow (see
// package rebalance): the owner check reads it as a member does and gives
// its assignment to the assignor as the previous one, so that the
// expected owners are those a member computes from it.
//
// A settled sticky group satisfies more than owner nodes equal to that
// computation, and mismatches checks it too:
//
//   - agreement: the node holds exactly the assignment computed from it
//     for the group as it is now (members follow a node written for their
//     reading of the group, and the assignor computed again from its own
//     result returns it unchanged), so a node written for an older group,
//     or one the members never converged on, is a mismatch;
//   - ownership, independently of the assignor: every owner is a thread of
//     a registered member that consumes the partition's topic;
//   - balance, independently of the assignor: no partition could move to
//     another thread that consumes its topic and owns at least two fewer
//     partitions of the group (StickyAssignor's promise, which with
//     identical subscriptions means counts within one of each other).
type stickyNode struct {
	path string
	// found is false when the node does not exist; err is set when its
	// value cannot be read.
	found bool
	err   error
	// owners maps every partition the node assigns to its thread.
	owners map[zkutil.TopicPartition]zkutil.ConsumerThreadID
}

// stickyRecord is the node's value as rebalance writes it (version 1): the
// assignment as topic -> thread ("<consumerId>-<n>") -> partitions, and
// what it was computed for, which the check does not need.
type stickyRecord struct {
	Version    int                           `json:"version"`
	Assignment map[string]map[string][]int32 `json:"assignment"`
}

// readStickyNode reads the group's sticky_assignment node. Only a failed
// read is an error; a missing or unreadable node is a mismatch of the
// check.
func readStickyNode(ctx context.Context, zk groupReader, group string) (*stickyNode, error) {
	n := &stickyNode{path: zkutil.GroupPath(group) + "/sticky_assignment"}
	data, _, err := zk.Get(ctx, n.path)
	if errors.Is(err, zksession.ErrNoNode) {
		return n, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", n.path, err)
	}
	n.found = true
	n.owners, n.err = decodeStickyRecord(data)
	return n, nil
}

// decodeStickyRecord returns partition -> thread of a node's value.
func decodeStickyRecord(data []byte) (map[zkutil.TopicPartition]zkutil.ConsumerThreadID, error) {
	var rec stickyRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, err
	}
	if rec.Version != 1 {
		return nil, fmt.Errorf("unknown version %d", rec.Version)
	}
	owners := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for topic, byThread := range rec.Assignment {
		for name, ps := range byThread {
			th, err := zkutil.ParseConsumerThreadID(name)
			if err != nil {
				return nil, err
			}
			for _, p := range ps {
				tp := zkutil.TopicPartition{Topic: topic, Partition: p}
				if prev, dup := owners[tp]; dup {
					return nil, fmt.Errorf("%s is assigned to %s and to %s", tp, prev, th)
				}
				owners[tp] = th
			}
		}
	}
	return owners, nil
}

// mismatches checks the node's agreement with view and the owners
// (actual: partition -> owner node value) against the sticky invariants;
// see stickyNode.
func (n *stickyNode) mismatches(view groupView, actual map[zkutil.TopicPartition]string) []string {
	var out []string
	switch {
	case !n.found && len(view.expected) > 0:
		out = append(out, fmt.Sprintf("the group has no %s; its members agree on nothing", n.path))
	case n.err != nil:
		out = append(out, fmt.Sprintf("cannot decode %s: %v", n.path, n.err))
	case n.found:
		for _, tp := range sortedPartitions(view.expected) {
			got, ok := n.owners[tp]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s assigns %s to nobody; the assignor gives it to %s", n.path, tp, view.expected[tp]))
			case got != view.expected[tp]:
				out = append(out, fmt.Sprintf("%s assigns %s to %s; computed from it, the assignor gives it to %s", n.path, tp, got, view.expected[tp]))
			}
		}
		for _, tp := range sortedPartitions(n.owners) {
			if _, ok := view.expected[tp]; !ok {
				out = append(out, fmt.Sprintf("%s assigns %s to %s; the assignor gives it to nobody", n.path, tp, n.owners[tp]))
			}
		}
	}

	consumes := map[string]map[string]bool{} // thread -> topics
	for t, ths := range view.threadsForTopic {
		for _, th := range ths {
			if consumes[th.String()] == nil {
				consumes[th.String()] = map[string]bool{}
			}
			consumes[th.String()][t] = true
		}
	}
	load := map[string]int{}
	for _, tp := range sortedPartitions(actual) {
		owner := actual[tp]
		if !consumes[owner][tp.Topic] {
			out = append(out, fmt.Sprintf("%s is owned by %s, not a thread of a registered member consuming %s", tp, owner, tp.Topic))
			continue
		}
		load[owner]++
	}
	// One report per owning thread: the first partition it could give to
	// the least loaded thread consuming the partition's topic.
	reported := map[string]bool{}
	for _, tp := range sortedPartitions(actual) {
		owner := actual[tp]
		if reported[owner] || !consumes[owner][tp.Topic] {
			continue
		}
		ths := slices.Clone(view.threadsForTopic[tp.Topic])
		slices.SortFunc(ths, func(a, b zkutil.ConsumerThreadID) int {
			return cmp.Or(cmp.Compare(load[a.String()], load[b.String()]), cmp.Compare(a.String(), b.String()))
		})
		if len(ths) > 0 && load[ths[0].String()] <= load[owner]-2 {
			reported[owner] = true
			out = append(out, fmt.Sprintf("unbalanced: %s owns %d partitions, %s (which consumes %s) owns %d; %s could move",
				owner, load[owner], ths[0], tp.Topic, load[ths[0].String()], tp))
		}
	}
	return out
}

// sortedPartitions returns the keys of m by topic, then partition.
func sortedPartitions[V any](m map[zkutil.TopicPartition]V) []zkutil.TopicPartition {
	return slices.SortedFunc(maps.Keys(m), func(a, b zkutil.TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
}
