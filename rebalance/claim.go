package rebalance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ConflictError reports that a partition this member was assigned is still
// owned by another thread: its previous owner has not released it yet.
type ConflictError struct {
	Partition zkutil.TopicPartition
	Owner     string // the value of the owner node, "" if unreadable
	Path      string
}

// Error names the partition, its owner and the owner node.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("rebalance: partition %s is still owned by %q (%s)", e.Partition, e.Owner, e.Path)
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

// claim creates, in session, the owner node of every partition in mine. A
// node that already holds our thread id in our session counts as ours (a
// create whose reply was lost, or a node of the previous generation that
// was not released). held names the partitions whose nodes the previous
// generation left for the same thread: each is read first and, if still
// ours, kept without a write. On the first conflict every node created or
// kept by this call is deleted again and a *ConflictError is returned.
// Every write is bound to session: none is applied by a later session.
//
// ctx ending stops the claim between two creates, never during one: a
// create abandoned while in flight could land after the rollback and leave
// an owner node nobody releases. Each operation is bounded by opTimeout.
func claim(ctx context.Context, zk ZooKeeper, session int64, group string, mine, held map[zkutil.TopicPartition]zkutil.ConsumerThreadID, opTimeout time.Duration) error {
	opCtx, cancel := context.WithTimeout(zkutil.InSession(context.WithoutCancel(ctx), session), opTimeout)
	defer cancel()
	created := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	rollback := func() {
		_ = release(opCtx, zk, session, group, created)
	}
	for _, tp := range sortedPartitions(mine) {
		if err := ctx.Err(); err != nil {
			rollback()
			return fmt.Errorf("rebalance: claim: %w", err)
		}
		path := zkutil.OwnerPath(group, tp.Topic, tp.Partition)
		want := mine[tp].String()
		if th, ok := held[tp]; ok && th == mine[tp] {
			data, stat, gerr := zk.Get(opCtx, path)
			if gerr == nil && string(data) == want && stat.EphemeralOwner == session {
				created[tp] = mine[tp]
				continue // still ours
			}
		}
		err := zk.CreateEphemeral(opCtx, path, []byte(want))
		if err == nil {
			created[tp] = mine[tp]
			continue
		}
		if !errors.Is(err, zkutil.ErrNodeExists) {
			// The create may have been applied before it failed
			// (a timeout): release checks owner and value first.
			created[tp] = mine[tp]
			rollback()
			return fmt.Errorf("rebalance: claim %s: %w", path, err)
		}
		data, stat, gerr := zk.Get(opCtx, path)
		if gerr == nil && string(data) == want && stat.EphemeralOwner == session {
			created[tp] = mine[tp]
			continue // ours already
		}
		rollback()
		return &ConflictError{Partition: tp, Owner: string(data), Path: path}
	}
	return nil
}

// release deletes the owner nodes of owned that still hold our thread id in
// session. Nodes taken over by others, or already gone, are left alone:
// each delete is conditional on the node's version, after its owner and
// value were checked, and bound to session.
func release(ctx context.Context, zk ZooKeeper, session int64, group string, owned map[zkutil.TopicPartition]zkutil.ConsumerThreadID) error {
	if session == 0 || len(owned) == 0 {
		return nil // no session: its ephemeral nodes are gone with it
	}
	ctx = zkutil.InSession(ctx, session)
	var errs []error
	for _, tp := range sortedPartitions(owned) {
		path := zkutil.OwnerPath(group, tp.Topic, tp.Partition)
		data, stat, err := zk.Get(ctx, path)
		if errors.Is(err, zkutil.ErrNoNode) {
			continue
		}
		if errors.Is(err, zkutil.ErrSessionExpired) {
			return nil // the session's nodes went with it
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rebalance: release %s: %w", path, err))
			continue
		}
		if string(data) != owned[tp].String() || stat.EphemeralOwner != session {
			continue
		}
		err = zk.Delete(ctx, path, stat.Version)
		if err != nil && !errors.Is(err, zkutil.ErrNoNode) && !errors.Is(err, zkutil.ErrSessionExpired) {
			errs = append(errs, fmt.Errorf("rebalance: release %s: %w", path, err))
		}
	}
	return errors.Join(errs...)
}
