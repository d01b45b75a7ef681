package zkgroup

import (
	"context"
	"errors"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// conflictWatch is a watch on an owner node held by another thread: its
// channel receives the node's deletion (or a change, or the loss of the
// watch). owner is the node's value when the watch was set.
type conflictWatch struct {
	owner string
	ch    <-chan zksession.WatchEvent
}

// awaitReleased waits, for at most the member's backoff, until no other
// thread owns a partition this member is about to claim: the partitions of
// mine that are not held (kept from the previous generation). Their
// previous owners release them in their own rebalance, which runs at the
// same time as ours, so without this wait the claim would often run into
// a node about to be deleted, roll back everything it created and kept,
// and start the attempt over (the group read again, the writes done
// twice). It only reads and watches: it writes nothing.
//
// It reads every such node once, up to zkInFlight at a time, leaving a
// watch on each that another thread holds, and then waits for those
// watches to report the deletions: one round of reads, whatever the number
// of nodes and however the previous owners pace their releases. A node
// that changes instead is read (and watched) again. A watch still pending
// when the wait gives up is kept in m.conflicts and used by the next wait
// on the same node instead of a new one.
//
// It returns nil when every such node is missing or ours, and also when a
// read fails or a watch is lost (claim then meets the same problem and
// handles it). When the backoff passes first, it returns a *ConflictError
// for the first node still owned by another, marked so that the backoff
// that follows does not wait a second time.
func (m *Member) awaitReleased(ctx context.Context, session int64, mine, held map[zkutil.TopicPartition]zkutil.ConsumerThreadID) error {
	var pending []zkutil.TopicPartition
	for _, tp := range sortedPartitions(mine) {
		if _, ok := held[tp]; !ok {
			pending = append(pending, tp)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	timer := time.NewTimer(m.cfg.Backoff)
	defer timer.Stop()
	watches, ok := m.watchOwners(ctx, session, mine, pending)
	if !ok {
		return nil
	}
	// Every watched node must go; waiting for them in order costs no more
	// than waiting for whichever goes first.
	for i := 0; i < len(pending); {
		w, watched := watches[i]
		if !watched {
			i++
			continue
		}
		tp := pending[i]
		path := zkutil.OwnerPath(m.cfg.Group, tp.Topic, tp.Partition)
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
			return &ConflictError{Partition: tp, Owner: w.owner, Path: path, waited: true}
		case ev := <-w.ch:
			delete(m.conflicts, path)
			switch ev.Type {
			case zksession.NodeDeleted:
				i++
			case zksession.WatchLost:
				return nil
			default: // changed (owner nodes never are): look again
				again, ok := m.watchOwners(ctx, session, mine, pending[i:i+1])
				if !ok {
					return nil
				}
				if w, watched = again[0]; watched {
					watches[i] = w
				} else {
					i++
				}
			}
		}
	}
	return nil
}

// watchOwners reads the owner node of every partition in parts (up to
// zkInFlight at once) and returns, by index into parts, a watch on each
// that exists and is not held by mine[tp] in session; the watches are kept
// in m.conflicts. A pending watch in m.conflicts that has not fired is
// used as it is, without a read: the node has not changed since it was
// set. It reports false when a read failed.
func (m *Member) watchOwners(ctx context.Context, session int64, mine map[zkutil.TopicPartition]zkutil.ConsumerThreadID, parts []zkutil.TopicPartition) (map[int]conflictWatch, bool) {
	watches := map[int]conflictWatch{}
	var toRead []int
	for i, tp := range parts {
		path := zkutil.OwnerPath(m.cfg.Group, tp.Topic, tp.Partition)
		if w, ok := m.conflicts[path]; ok {
			select {
			case <-w.ch:
				delete(m.conflicts, path) // fired: what it saw is past
			default:
				watches[i] = w
				continue
			}
		}
		toRead = append(toRead, i)
	}
	read := make([]conflictWatch, len(toRead))
	errs := make([]error, len(toRead))
	forEach(len(toRead), nil, func(k int) {
		tp := parts[toRead[k]]
		data, stat, ch, err := m.zk.GetW(ctx, zkutil.OwnerPath(m.cfg.Group, tp.Topic, tp.Partition))
		switch {
		case errors.Is(err, zksession.ErrNoNode):
		case err != nil:
			errs[k] = err
		case !heldBy(data, stat, mine[tp], session):
			read[k] = conflictWatch{owner: string(data), ch: ch}
		}
		// A node of ours keeps its watch until it changes or goes; that
		// fires into a buffered channel nobody reads.
	})
	failed := false
	for k, i := range toRead {
		failed = failed || errs[k] != nil
		if read[k].ch != nil {
			tp := parts[i]
			m.conflicts[zkutil.OwnerPath(m.cfg.Group, tp.Topic, tp.Partition)] = read[k]
			watches[i] = read[k]
		}
	}
	return watches, !failed && ctx.Err() == nil
}

// awaitDeleted waits until the node at path is deleted (true, also when it
// is already gone) or until ctx ends or stop fires (false; a node that
// cannot be watched waits for these). The watch is kept in m.conflicts
// until it fires, so that repeated waits on one node do not pile up
// watches.
func (m *Member) awaitDeleted(ctx context.Context, path string, stop <-chan time.Time) bool {
	w, ok := m.conflicts[path]
	if !ok {
		exists, _, ch, err := m.zk.ExistsW(ctx, path)
		switch {
		case err == nil && !exists:
			return true
		case err == nil:
			w = conflictWatch{ch: ch}
			m.conflicts[path] = w
		}
	}
	select {
	case <-ctx.Done():
		return false
	case <-stop:
		return false
	case <-w.ch:
		delete(m.conflicts, path)
		return true
	}
}
