package zkgroup

import (
	"context"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
)

// ZooKeeper is the part of the module's ZooKeeper session a Member uses.
// Paths are relative to the session's chroot. Each method does what the
// session's method of the same name does.
type ZooKeeper interface {
	// Get reads a node's data; GetW also sets a watch on it.
	Get(ctx context.Context, path string) ([]byte, zksession.Stat, error)
	GetW(ctx context.Context, path string) ([]byte, zksession.Stat, <-chan zksession.WatchEvent, error)
	// Children lists a node's children; ChildrenW also sets a watch on
	// them.
	Children(ctx context.Context, path string) ([]string, error)
	ChildrenW(ctx context.Context, path string) ([]string, <-chan zksession.WatchEvent, error)
	// Exists reports whether a node exists; ExistsW also sets a watch on
	// it.
	Exists(ctx context.Context, path string) (bool, zksession.Stat, error)
	ExistsW(ctx context.Context, path string) (bool, zksession.Stat, <-chan zksession.WatchEvent, error)
	// CreateEphemeral creates a node of this session;
	// CreatePersistent a node that outlives it, with its parents.
	CreateEphemeral(ctx context.Context, path string, data []byte) error
	CreatePersistent(ctx context.Context, path string, data []byte) error
	// Set writes a node's data if its version matches (-1 for any).
	Set(ctx context.Context, path string, data []byte, version int32) (zksession.Stat, error)
	// EnsurePath creates a persistent path and its parents if missing.
	EnsurePath(ctx context.Context, path string) error
	// Delete removes a node if its version matches; DeleteEphemeral
	// removes one of this session's ephemeral nodes.
	Delete(ctx context.Context, path string, version int32) error
	DeleteEphemeral(ctx context.Context, path string, version int32) error
	// Multi runs ops as one ZooKeeper transaction.
	Multi(ctx context.Context, ops ...zksession.Op) error
	// WatchMark returns the mark of the node at path in the current
	// session.
	WatchMark(path string) zksession.WatchMark
	// ID is the id of the current ZooKeeper session, 0 between an
	// expiry and the next session.
	ID() int64
	// AwaitLease waits until the lease of session id holds.
	AwaitLease(ctx context.Context, id int64) error
	// Subscribe returns the session's events and a function that stops
	// them.
	Subscribe() (<-chan zksession.SessionEvent, func())
}

var _ ZooKeeper = (*zksession.Session)(nil)
