package zkgroup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ConflictError reports that a partition this member was assigned is still
// owned by another thread: its previous owner has not released it yet.
type ConflictError struct {
	// Partition is the partition still owned, Owner the value of its
	// owner node ("" if unreadable) and Path that node's path.
	Partition zkutil.TopicPartition
	Owner     string
	Path      string
	waited    bool // awaitReleased waited a backoff for it already
}

// Error names the partition, its owner and the owner node.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("partition %s is still owned by %q (%s)", e.Partition, e.Owner, e.Path)
}

// sortedPartitions returns the keys of owned in a stable order.
func sortedPartitions(owned map[zkutil.TopicPartition]zkutil.ConsumerThreadID) []zkutil.TopicPartition {
	return slices.SortedFunc(maps.Keys(owned), func(a, b zkutil.TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition) - int(b.Partition)
	})
}

// claim creates, in zk's session, the owner node of every partition in
// mine. A node that already holds our thread id in our session counts as
// ours (a create whose reply was lost, or a node of the previous
// generation that was not released). held names the partitions whose nodes the previous
// generation left for the same thread: each is read first and, if still
// ours, kept without a write. Every write is made through zk, so none is
// applied by a later session. The nodes to create are created in
// transactions of up to zkMultiOps; what a transaction could not create,
// and the held nodes, node by node, up to zkInFlight at once.
// (awaitReleased, before it, makes conflicts rare.) Every node created or
// found ours is recorded in known (if not nil), so that its release needs
// no read.
//
// On the first conflict, or when ctx ends or opTimeout passes, no further
// create starts; those already sent are waited for (a bound operation
// returns only once go-zookeeper has answered or failed it, see
// zksession.Bound), and then every node created or kept by this call is
// deleted again, under a deadline of its own, and the error returned (a
// *ConflictError for the first conflicting partition in order). What the
// rollback could not delete (ZooKeeper unreachable) is returned in
// unreleased: those nodes may still be ours, and the caller must release
// them later.
func claim(ctx context.Context, zk Bound, group string, mine, held map[zkutil.TopicPartition]zkutil.ConsumerThreadID, known ownedNodes, opTimeout time.Duration) (unreleased map[zkutil.TopicPartition]zkutil.ConsumerThreadID, err error) {
	session := zk.ID()
	opCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	parts := sortedPartitions(mine)
	// errs[i] is what stopped the claim of parts[i]; created marks the
	// nodes to delete on a rollback (also one whose create may have been
	// applied before it failed: release checks owner and value first).
	errs := make([]error, len(parts))
	created := make([]bool, len(parts))
	// versions[i] is the version of parts[i]'s node once known ours, else -1.
	versions := make([]int32, len(parts))
	var fresh []int // the partitions to create: not held
	for i, tp := range parts {
		versions[i] = -1
		if th, ok := held[tp]; !ok || th != mine[tp] {
			fresh = append(fresh, i)
		}
	}
	var failed atomic.Bool
	stop := func() bool { return failed.Load() || ctx.Err() != nil || opCtx.Err() != nil }
	// The nodes to create go first in transactions of up to zkMultiOps
	// creates, which cost ZooKeeper one proposal each instead of one per
	// node. A transaction that fails creates nothing (a node exists, ours
	// or another's; a parent is missing; its outcome is unknown): its
	// partitions take the path below, node by node, which tells these
	// cases apart.
	batches := batchesOf(len(fresh))
	forEach(len(batches), stop, func(k int) {
		idx := fresh[batches[k][0]:batches[k][1]]
		ops := make([]zksession.Op, len(idx))
		for j, i := range idx {
			tp := parts[i]
			ops[j] = zksession.CreateEphemeralOp(zkutil.OwnerPath(group, tp.Topic, tp.Partition), []byte(mine[tp].String()))
		}
		if zk.Multi(opCtx, ops...) == nil {
			for _, i := range idx {
				created[i], versions[i] = true, 0
			}
		}
	})
	forEach(len(parts), stop, func(i int) {
		if created[i] {
			return // by a transaction
		}
		tp := parts[i]
		path := zkutil.OwnerPath(group, tp.Topic, tp.Partition)
		ours := func() (bool, string) {
			data, stat, gerr := zk.Get(opCtx, path)
			yes := gerr == nil && heldBy(data, stat, mine[tp], session)
			if yes {
				versions[i] = stat.Version
			}
			return yes, string(data)
		}
		if th, ok := held[tp]; ok && th == mine[tp] {
			if still, _ := ours(); still {
				created[i] = true
				return
			}
		}
		err := zk.CreateEphemeral(opCtx, path, []byte(mine[tp].String()))
		if err == nil {
			created[i], versions[i] = true, 0
			return
		}
		if !errors.Is(err, zksession.ErrNodeExists) {
			created[i] = true
			errs[i] = fmt.Errorf("claim %s: %w", path, err)
		} else if yes, owner := ours(); yes {
			created[i] = true
			return // ours already
		} else {
			errs[i] = &ConflictError{Partition: tp, Owner: owner, Path: path}
		}
		failed.Store(true)
	})
	if known == nil {
		known = ownedNodes{}
	}
	for i, tp := range parts {
		if versions[i] >= 0 {
			known[tp] = ownedNode{thread: mine[tp], session: session, version: versions[i]}
		}
	}
	err = firstError(errs)
	if err == nil {
		switch {
		case ctx.Err() != nil:
			err = fmt.Errorf("claim: %w", ctx.Err())
		case opCtx.Err() != nil:
			err = fmt.Errorf("claim: not done within %v: %w", opTimeout, opCtx.Err())
		}
	}
	if err == nil {
		return nil, nil
	}
	rollback := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for i, tp := range parts {
		if created[i] {
			rollback[tp] = mine[tp]
		}
	}
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer rcancel()
	unreleased, rerr := release(rctx, zk, group, rollback, known)
	if rerr != nil {
		err = errors.Join(err, fmt.Errorf("claim rollback: %w", rerr))
	}
	return unreleased, err
}

// heldBy reports whether an owner node with data and stat holds thread th
// in session: a node of another thread, or of an earlier session of ours
// (not yet removed by ZooKeeper), is not ours.
func heldBy(data []byte, stat zksession.Stat, th zkutil.ConsumerThreadID, session int64) bool {
	return string(data) == th.String() && stat.EphemeralOwner == session
}

// firstError returns the first non-nil error of errs.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// release deletes the owner nodes of owned that still hold our thread id in
// zk's session. Nodes taken over by others, or already gone, are left alone:
// each delete is conditional on the node's version and made through zk. A
// node that known records as held in session is deleted without a read
// (ownedNodes says why that is safe); any other is read first, and deleted
// only if it holds our thread id in session. Known nodes are deleted in
// transactions of up to zkMultiOps, the others up to zkInFlight at once.
// Every partition of owned leaves known. unreleased holds the partitions
// whose node could be neither read nor deleted (ZooKeeper unreachable
// before ctx ended): they may still be ours, and the caller must try
// again; err says why.
func release(ctx context.Context, zk Bound, group string, owned map[zkutil.TopicPartition]zkutil.ConsumerThreadID, known ownedNodes) (unreleased map[zkutil.TopicPartition]zkutil.ConsumerThreadID, err error) {
	defer known.forget(owned)
	session := zk.ID()
	if session == 0 || len(owned) == 0 {
		return nil, nil // no session: its ephemeral nodes are gone with it
	}
	parts := sortedPartitions(owned)
	errs := make([]error, len(parts))
	var expired atomic.Bool
	// The nodes known go first, in transactions of up to zkMultiOps
	// conditional deletes (one proposal each instead of one per node). A
	// transaction that fails deletes nothing (a node gone, or not the one
	// recorded): its partitions take the path below, node by node. So
	// does one whose outcome is unknown, read first there: its deletes
	// may have been applied, and a peer's nodes created since.
	var sure []int
	for i, tp := range parts {
		if _, ok := known.version(tp, owned[tp], session); ok {
			sure = append(sure, i)
		}
	}
	deleted := make([]bool, len(parts))
	unsure := make([]bool, len(parts))
	batches := batchesOf(len(sure))
	forEach(len(batches), expired.Load, func(k int) {
		idx := sure[batches[k][0]:batches[k][1]]
		ops := make([]zksession.Op, len(idx))
		for j, i := range idx {
			tp := parts[i]
			v, _ := known.version(tp, owned[tp], session)
			ops[j] = zksession.DeleteOp(zkutil.OwnerPath(group, tp.Topic, tp.Partition), v)
		}
		err := zk.Multi(ctx, ops...)
		for _, i := range idx {
			deleted[i] = err == nil
			unsure[i] = errors.Is(err, zksession.ErrOutcomeUnknown)
		}
		if errors.Is(err, zksession.ErrSessionExpired) {
			expired.Store(true) // the session's nodes went with it
		}
	})
	forEach(len(parts), expired.Load, func(i int) {
		if deleted[i] {
			return
		}
		tp := parts[i]
		path := zkutil.OwnerPath(group, tp.Topic, tp.Partition)
		if version, ok := known.version(tp, owned[tp], session); ok && !unsure[i] {
			err := zk.DeleteEphemeral(ctx, path, version)
			switch {
			case err == nil, errors.Is(err, zksession.ErrNoNode):
				return
			case errors.Is(err, zksession.ErrSessionExpired):
				expired.Store(true) // the session's nodes went with it
				return
			case !errors.Is(err, zksession.ErrBadVersion):
				errs[i] = fmt.Errorf("release %s: %w", path, err)
				return
			}
			// Not the node recorded: look at what is there.
		}
		data, stat, err := zk.Get(ctx, path)
		if errors.Is(err, zksession.ErrNoNode) {
			return
		}
		if errors.Is(err, zksession.ErrSessionExpired) {
			expired.Store(true) // the session's nodes went with it
			return
		}
		if err != nil {
			errs[i] = fmt.Errorf("release %s: %w", path, err)
			return
		}
		if !heldBy(data, stat, owned[tp], session) {
			return
		}
		err = zk.DeleteEphemeral(ctx, path, stat.Version)
		if err != nil && !errors.Is(err, zksession.ErrNoNode) && !errors.Is(err, zksession.ErrSessionExpired) {
			errs[i] = fmt.Errorf("release %s: %w", path, err)
		}
	})
	if expired.Load() {
		return nil, nil
	}
	for i, tp := range parts {
		if errs[i] != nil {
			if unreleased == nil {
				unreleased = map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
			}
			unreleased[tp] = owned[tp]
		}
	}
	return unreleased, errors.Join(errs...)
}
