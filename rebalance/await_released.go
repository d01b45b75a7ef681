package rebalance

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// awaitReleased waits, for at most the member's backoff, until no other
// thread owns a partition this member is about to claim: the partitions of
// mine that are not held (kept from the previous generation). Their
// previous owners release them in their own rebalance, which runs at the
// same time as ours, so without this wait the claim would often run into
// a node about to be deleted, roll back everything it created and kept,
// and start the attempt over (the group read again, the writes done
// twice). It only reads and watches: it writes nothing.
//
// It returns nil when every such node is missing or ours, and also when a
// read fails (claim then meets the same error and handles it). When the
// backoff passes first, it returns a *ConflictError for the first node
// still owned by another, marked so that the backoff that follows does
// not wait a second time.
func (m *Member) awaitReleased(ctx context.Context, session int64, mine, held map[zkutil.TopicPartition]zkutil.ConsumerThreadID) error {
	var pending []zkutil.TopicPartition
	for _, tp := range sortedPartitions(mine) {
		if _, ok := held[tp]; !ok {
			pending = append(pending, tp)
		}
	}
	timer := time.NewTimer(m.cfg.Backoff)
	defer timer.Stop()
	for len(pending) > 0 {
		taken := make([]bool, len(pending)) // by another thread
		owners := make([]string, len(pending))
		var failed atomic.Bool
		forEach(len(pending), nil, func(i int) {
			tp := pending[i]
			data, stat, err := m.zk.Get(ctx, zkutil.OwnerPath(m.cfg.Group, tp.Topic, tp.Partition))
			switch {
			case errors.Is(err, zkutil.ErrNoNode):
			case err != nil:
				failed.Store(true)
			case !heldBy(data, stat, mine[tp], session):
				taken[i], owners[i] = true, string(data)
			}
		})
		if failed.Load() || ctx.Err() != nil {
			return nil
		}
		var still []zkutil.TopicPartition
		first := -1
		for i, tp := range pending {
			if taken[i] {
				still = append(still, tp)
				if first < 0 {
					first = i
				}
			}
		}
		if first < 0 {
			return nil
		}
		tp := pending[first]
		conflict := &ConflictError{Partition: tp, Owner: owners[first], Path: zkutil.OwnerPath(m.cfg.Group, tp.Topic, tp.Partition), waited: true}
		if !m.awaitDeleted(ctx, conflict.Path, timer.C) {
			return conflict
		}
		pending = still
	}
	return nil
}

// awaitDeleted waits until the node at path is deleted (true, also when it
// is already gone) or until ctx ends or stop fires (false; a node that
// cannot be watched waits for these). The watch is kept in m.conflicts
// until it fires, so that repeated waits on one node do not pile up
// watches.
func (m *Member) awaitDeleted(ctx context.Context, path string, stop <-chan time.Time) bool {
	deleted := m.conflicts[path]
	if deleted == nil {
		exists, _, ch, err := m.zk.ExistsW(ctx, path)
		switch {
		case err == nil && !exists:
			return true
		case err == nil:
			m.conflicts[path] = ch
			deleted = ch
		}
	}
	select {
	case <-ctx.Done():
		return false
	case <-stop:
		return false
	case <-deleted:
		delete(m.conflicts, path)
		return true
	}
}
