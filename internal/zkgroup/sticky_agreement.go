package zkgroup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// How sticky members agree on the previous assignment.
//
// The sticky strategy computes from the group's previous assignment, and
// every member must compute from the same one, without talking to the
// others, as every member computes range from what it reads. The owner
// nodes /consumers/<group>/owners/<topic>/<partition> cannot serve as that
// previous assignment: during a rebalance members release the partitions
// that move away and claim the ones they gain, each at its own pace, so
// two members reading the owner nodes a few milliseconds apart see
// different owners, compute different assignments, and wait for each
// other's partitions.
//
// A sticky group therefore keeps its agreed assignment in one persistent
// node, /consumers/<group>/sticky_assignment (stickyRecord), tagged with
// the input it was computed for: a fingerprint of the group as a member
// read it (its members, their threads per topic, the topics' partitions)
// and the Cversion of /consumers/<group>/ids at the time. ZooKeeper orders
// the writes of that node, and each write is conditional on the version
// read, so it holds one assignment at a time that everyone reads the same.
// A member that has read the group (view) and the node:
//
//   - follows the node when it was written for the same fingerprint: it
//     computes the assignment again with the node's as the previous one,
//     which gives the node's own assignment back (the assignor keeps a
//     balanced previous assignment unchanged) and cannot trust a node
//     that is not one;
//   - otherwise, if the node was written for a later listing of the
//     members (a higher Cversion), reads the group again: its own view is
//     stale;
//   - otherwise computes the next assignment from its view with the
//     node's as the previous one and writes it, conditional on the version
//     it read. Members with the same view compute the same result from the
//     same node, so of members racing to write, one wins and the others,
//     refused, read the node again and follow it.
//
// Every sticky member watches the node: when a write makes it differ from
// what the member follows (a member that read a later view wrote it), it
// rebalances, so that the group converges on the last write. Writes are
// bound to the member's session, as every write of the rebalance. Two
// members that keep reading the group differently (for example wildcard
// members with different exclude.internal.topics) would overwrite each
// other's result forever; a member does not overwrite a node written for
// the same listing of members after its own write for the same view, and
// fails the attempt instead (errStickyDisagreement), which tells the
// application after rebalance.max.retries attempts.
//
// The node outlives the group (ZooKeeper keeps it when every member has
// left); threads and partitions it names that are no longer in the group
// are ignored, so a group that comes back starts from nothing unless its
// members use fixed consumer.id values.

// stickyPath is the node holding a sticky group's assignment.
func stickyPath(group string) string { return zkutil.GroupPath(group) + "/sticky_assignment" }

// stickyRecord is the value of the sticky_assignment node.
type stickyRecord struct {
	Version     int    `json:"version"`
	IDsCversion int32  `json:"ids_cversion"`
	Fingerprint string `json:"fingerprint"`
	// Assignment maps topic -> thread ("<consumerId>-<n>") -> partitions.
	Assignment map[string]map[string][]int32 `json:"assignment"`
}

// errStaleView: the group's assignment was written for a newer listing of
// its members than the one the attempt read; the group is read again.
var errStaleView = errors.New("the group changed while it was read")

// errStickyDisagreement: another member overwrote this member's sticky
// assignment with one computed from another reading of the same members.
var errStickyDisagreement = errors.New("members read the group differently (their topics, partitions or subscriptions differ, for example wildcard members with different exclude.internal.topics); the group's sticky assignment was written by a member that sees another group than this one")

// encodeSticky returns the node's value for a.
func encodeSticky(a zkassign.Assignment, cversion int32, fp string) ([]byte, error) {
	rec := stickyRecord{Version: 1, IDsCversion: cversion, Fingerprint: fp, Assignment: map[string]map[string][]int32{}}
	for _, owned := range a {
		for tp, th := range owned {
			byThread := rec.Assignment[tp.Topic]
			if byThread == nil {
				byThread = map[string][]int32{}
				rec.Assignment[tp.Topic] = byThread
			}
			byThread[th.String()] = append(byThread[th.String()], tp.Partition)
		}
	}
	for _, byThread := range rec.Assignment {
		for _, ps := range byThread {
			slices.Sort(ps)
		}
	}
	return json.Marshal(rec) // maps are written in key order
}

// decodeSticky reads the node's value: the record and the assignment it
// holds, partition -> thread. A value that cannot be read is an error; the
// caller then computes from nothing and overwrites it.
func decodeSticky(path string, data []byte) (*stickyRecord, map[zkutil.TopicPartition]zkutil.ConsumerThreadID, error) {
	var rec stickyRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, nil, &zkutil.DecodeError{Path: path, Err: err}
	}
	if rec.Version != 1 {
		return nil, nil, &zkutil.DecodeError{Path: path, Err: fmt.Errorf("unknown version %d", rec.Version)}
	}
	owners := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for topic, byThread := range rec.Assignment {
		for name, ps := range byThread {
			th, err := zkutil.ParseConsumerThreadID(name)
			if err != nil {
				return nil, nil, &zkutil.DecodeError{Path: path, Err: err}
			}
			for _, p := range ps {
				owners[zkutil.TopicPartition{Topic: topic, Partition: p}] = th
			}
		}
	}
	return &rec, owners, nil
}

// stickyFollow is what a Member follows of its group's sticky_assignment node.
type stickyFollow struct {
	version int32  // the node's version the member follows; -1 none
	wrote   string // the fingerprint of the member's last write
}

// agreeSticky returns the sticky assignment of the group as view reads it,
// agreed through the group's sticky_assignment node (see above). cversion
// is the Cversion of the group's ids node, read before its children.
func (m *Member) agreeSticky(ctx context.Context, view zkassign.AssignmentContext, cversion int32) (zkassign.Assignment, error) {
	fp, err := zkassign.Fingerprint(view)
	if err != nil {
		return nil, err
	}
	path := stickyPath(m.cfg.Group)
	in := m.zk.Bind(m.registered)
	for range 8 {
		data, stat, err := in.Get(ctx, path)
		exists := err == nil
		if errors.Is(err, zksession.ErrNoNode) {
			err = nil
		}
		if err != nil {
			return nil, fmt.Errorf("read the group's sticky assignment %s: %w", path, err)
		}
		var previous map[zkutil.TopicPartition]zkutil.ConsumerThreadID
		if exists {
			rec, owners, derr := decodeSticky(path, data)
			switch {
			case derr != nil:
				key := "sticky " + derr.Error()
				if !m.reported[key] {
					m.reported[key] = true
					m.report(fmt.Errorf("the group's sticky assignment is unreadable; it is computed again from nothing: %w", derr))
				}
			case rec.Fingerprint == fp:
				view.Previous = owners
				a, err := m.cfg.Assignor.Assign(view)
				if err == nil {
					m.sticky.version = stat.Version
				}
				return a, err
			case rec.IDsCversion > cversion:
				return nil, errStaleView
			case rec.IDsCversion == cversion && m.sticky.wrote == fp:
				return nil, fmt.Errorf("%w (node %s, version %d)", errStickyDisagreement, path, stat.Version)
			default:
				previous = owners
			}
		}
		view.Previous = previous
		a, err := m.cfg.Assignor.Assign(view)
		if err != nil {
			return nil, err
		}
		value, err := encodeSticky(a, cversion, fp)
		if err != nil {
			return nil, err
		}
		var version int32
		if exists {
			var st zksession.Stat
			st, err = in.Set(ctx, path, value, stat.Version)
			version = st.Version
		} else {
			err = in.CreatePersistent(ctx, path, value)
		}
		switch {
		case err == nil:
			m.sticky = stickyFollow{version: version, wrote: fp}
			m.log.Info("wrote the group's sticky assignment", "path", path, "version", version, "members", len(view.Consumers), "ids_cversion", cversion)
			return a, nil
		case errors.Is(err, zksession.ErrBadVersion), errors.Is(err, zksession.ErrNodeExists), errors.Is(err, zksession.ErrNoNode):
			continue // another member wrote first (or deleted it): read it again
		default:
			return nil, fmt.Errorf("write the group's sticky assignment %s: %w", path, err)
		}
	}
	return nil, fmt.Errorf("no agreement on the group's sticky assignment %s after 8 reads", path)
}

// armSticky watches the group's sticky_assignment node (its data, or its
// creation) in the session of the member's watches, and reports whether
// the node is still the version the member follows: a member needs to
// rebalance only when it is not.
func (m *Member) armSticky(ctx context.Context) (unchanged bool) {
	path := stickyPath(m.cfg.Group)
	if m.armed[path] {
		return true
	}
	in := m.zk.Bind(m.armedIn)
	version := int32(-1)
	_, stat, ch, err := in.GetW(ctx, path)
	if errors.Is(err, zksession.ErrNoNode) {
		_, _, ch, err = in.ExistsW(ctx, path)
	} else if err == nil {
		version = stat.Version
	}
	m.forward(path, ch, err)
	return err == nil && version == m.sticky.version && version >= 0
}
