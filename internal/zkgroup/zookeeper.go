package zkgroup

import (
	"context"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
)

// ZooKeeper is the part of the module's ZooKeeper session a Member uses
// outside any one ZooKeeper session: reads of whichever session is current,
// its events, and Bind, which gives the operations of one session. It has
// no write: every write of a Member goes through a Bound, so a signature
// that takes a Bound is one that writes, and only in that session. Paths
// are relative to the session's chroot. Each method does what the
// zksession.Session method of the same name does. Session adapts a
// *zksession.Session.
type ZooKeeper interface {
	// Get reads a node's data; GetW also sets a watch on it.
	Get(ctx context.Context, path string) ([]byte, zksession.Stat, error)
	GetW(ctx context.Context, path string) ([]byte, zksession.Stat, <-chan zksession.WatchEvent, error)
	// Children lists a node's children.
	Children(ctx context.Context, path string) ([]string, error)
	// Exists reports whether a node exists; ExistsW also sets a watch on
	// it.
	Exists(ctx context.Context, path string) (bool, zksession.Stat, error)
	ExistsW(ctx context.Context, path string) (bool, zksession.Stat, <-chan zksession.WatchEvent, error)
	// WatchMark returns the mark of the node at path in the current
	// session.
	WatchMark(path string) zksession.WatchMark
	// ID is the id of the current ZooKeeper session, 0 between an
	// expiry and the next session.
	ID() int64
	// Bind returns the operations of ZooKeeper session id
	// (zksession.Session.Bind).
	Bind(id int64) Bound
	// Subscribe returns the session's events and a function that stops
	// them.
	Subscribe() (<-chan zksession.SessionEvent, func())
}

// Bound is the part of a zksession.Bound a Member uses: the operations of
// one ZooKeeper session, sent only in that session and failing with
// zksession.ErrSessionExpired once it is gone, so that none is ever
// applied by the session that replaces it. Each does what the
// zksession.Bound method of the same name does.
type Bound interface {
	// ID is the id of the session, which never changes.
	ID() int64
	// AwaitLease waits until the lease of the session holds.
	AwaitLease(ctx context.Context) error
	// Get reads a node's data; GetW also sets a watch on it.
	Get(ctx context.Context, path string) ([]byte, zksession.Stat, error)
	GetW(ctx context.Context, path string) ([]byte, zksession.Stat, <-chan zksession.WatchEvent, error)
	// ChildrenW lists a node's children and sets a watch on them.
	ChildrenW(ctx context.Context, path string) ([]string, <-chan zksession.WatchEvent, error)
	// Exists reports whether a node exists; ExistsW also sets a watch on
	// it.
	Exists(ctx context.Context, path string) (bool, zksession.Stat, error)
	ExistsW(ctx context.Context, path string) (bool, zksession.Stat, <-chan zksession.WatchEvent, error)
	// CreateEphemeral creates a node of the session;
	// CreatePersistent a node that outlives it, with its parents.
	CreateEphemeral(ctx context.Context, path string, data []byte) error
	CreatePersistent(ctx context.Context, path string, data []byte) error
	// Set writes a node's data if its version matches (-1 for any).
	Set(ctx context.Context, path string, data []byte, version int32) (zksession.Stat, error)
	// EnsurePath creates a persistent path and its parents if missing.
	EnsurePath(ctx context.Context, path string) error
	// Delete removes a node if its version matches; DeleteEphemeral
	// removes one of the session's ephemeral nodes.
	Delete(ctx context.Context, path string, version int32) error
	DeleteEphemeral(ctx context.Context, path string, version int32) error
	// Multi runs ops as one ZooKeeper transaction.
	Multi(ctx context.Context, ops ...zksession.Op) error
}

// Session is the ZooKeeper of s.
func Session(s *zksession.Session) ZooKeeper { return sessionZK{s} }

// sessionZK adapts a *zksession.Session to ZooKeeper: its Bind returns the
// Bound interface.
type sessionZK struct{ *zksession.Session }

func (s sessionZK) Bind(id int64) Bound { return s.Session.Bind(id) }

var (
	_ ZooKeeper = sessionZK{}
	_ Bound     = zksession.Bound{}
)
