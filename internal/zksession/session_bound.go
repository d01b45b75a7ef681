package zksession

import (
	"context"

	"github.com/go-zookeeper/zk"
)

// Bound is one ZooKeeper session of a Session, by id, with the operations
// that must run in that session and in no other: the writes that act on
// ownership the session holds (offset commits, owner nodes, their
// rollback and release, registrations) and the reads and watches they
// depend on. A function that takes a Bound says so in its signature.
//
// Each operation of a Bound waits until the lease of its session holds
// (see Held), is sent only on the connection that carries that session,
// and fails with an error wrapping ErrSessionExpired once the session is
// gone; none is ever applied by the session that replaces it, because the
// connection of a session never opens another one and is closed, failing
// everything still queued in it, once its session has expired. Otherwise
// each does what the Session's method of the same name does, retries
// after a connection loss included.
//
// ctx bounds the waits of an operation (for the lease, for a
// reconnection), not a request go-zookeeper already holds: the operation
// returns when go-zookeeper has answered the request or failed it with its
// connection, so that nothing of it is left in flight to land after what
// the caller does next in the same session (a claim's rollback after a
// create that timed out, say).
//
// A Bound is a small value, safe for concurrent use; get one from
// Session.Bind or Session.Current. The zero Bound has no Session and must
// not be used.
type Bound struct {
	s  *Session
	id int64
}

// Bind returns the operations of ZooKeeper session id, one of this
// Session's (usually the id a generation or a claim was made in). A Bound
// of a session that is gone, or never was this Session's, fails every
// operation with ErrSessionExpired.
func (s *Session) Bind(id int64) Bound { return Bound{s: s, id: id} }

// Current returns the operations of the current ZooKeeper session, and
// false between an expiry and the next session. Unlike ID, the Bound keeps
// naming that session when the Session moves on to the next.
func (s *Session) Current() (Bound, bool) {
	id := s.ID()
	if id == 0 {
		return Bound{}, false
	}
	return s.Bind(id), true
}

// ID returns the id of b's ZooKeeper session; it never changes.
func (b Bound) ID() int64 { return b.id }

// in is the binding of b's operations.
func (b Bound) in() binding { return binding{id: b.id, bound: true} }

// Held reports whether the lease of b's session holds (Session.LeaseHeld).
// With Changed, it makes b a fence of what the session owns: messages are
// handed out, and Kafka commits made, only while it holds.
func (b Bound) Held() bool { return b.s.LeaseHeld(b.id) }

// Changed returns a channel closed at the next change of the lease
// (Session.LeaseChanged), its lapse by the clock included: take it, check
// Held, and look again when it is closed.
func (b Bound) Changed() <-chan struct{} { return b.s.LeaseChanged() }

// AwaitLease waits until the lease of b's session holds (Session.AwaitLease).
func (b Bound) AwaitLease(ctx context.Context) error { return b.s.awaitLease(ctx, b.id) }

// Get is Session.Get in b's session.
func (b Bound) Get(ctx context.Context, path string) ([]byte, Stat, error) {
	return b.s.get(ctx, b.in(), path)
}

// GetW is Session.GetW in b's session: the watch is set by that session,
// and is lost (WatchLost) with it.
func (b Bound) GetW(ctx context.Context, path string) ([]byte, Stat, <-chan WatchEvent, error) {
	return b.s.getW(ctx, b.in(), path)
}

// Children is Session.Children in b's session.
func (b Bound) Children(ctx context.Context, path string) ([]string, error) {
	return b.s.children(ctx, b.in(), path)
}

// ChildrenW is Session.ChildrenW in b's session.
func (b Bound) ChildrenW(ctx context.Context, path string) ([]string, <-chan WatchEvent, error) {
	return b.s.childrenW(ctx, b.in(), path)
}

// Exists is Session.Exists in b's session.
func (b Bound) Exists(ctx context.Context, path string) (bool, Stat, error) {
	return b.s.exists(ctx, b.in(), path)
}

// ExistsW is Session.ExistsW in b's session.
func (b Bound) ExistsW(ctx context.Context, path string) (bool, Stat, <-chan WatchEvent, error) {
	return b.s.existsW(ctx, b.in(), path)
}

// CreateEphemeral is Session.CreateEphemeral in b's session: the node is
// b's session's, and is deleted when that session ends.
func (b Bound) CreateEphemeral(ctx context.Context, path string, data []byte) error {
	return b.s.create(ctx, b.in(), path, data, zk.FlagEphemeral)
}

// CreatePersistent is Session.CreatePersistent in b's session.
func (b Bound) CreatePersistent(ctx context.Context, path string, data []byte) error {
	return b.s.create(ctx, b.in(), path, data, zk.FlagPersistent)
}

// EnsurePath is Session.EnsurePath in b's session.
func (b Bound) EnsurePath(ctx context.Context, path string) error {
	return b.s.ensurePath(ctx, b.in(), path)
}

// Set is Session.Set in b's session.
func (b Bound) Set(ctx context.Context, path string, data []byte, version int32) (Stat, error) {
	return b.s.set(ctx, b.in(), path, data, version)
}

// SetOrCreate is Session.SetOrCreate in b's session.
func (b Bound) SetOrCreate(ctx context.Context, path string, data []byte) error {
	return b.s.setOrCreate(ctx, b.in(), path, data)
}

// Delete is Session.Delete in b's session.
func (b Bound) Delete(ctx context.Context, path string, version int32) error {
	return b.s.delete(ctx, b.in(), path, version)
}

// DeleteEphemeral is Session.DeleteEphemeral in b's session: after a
// connection loss, the node is deleted only if it is still an ephemeral
// node of b's session with that version.
func (b Bound) DeleteEphemeral(ctx context.Context, path string, version int32) error {
	return b.s.deleteEphemeral(ctx, b.in(), path, version)
}

// Multi is Session.Multi in b's session.
func (b Bound) Multi(ctx context.Context, ops ...Op) error {
	return b.s.multi(ctx, b.in(), ops)
}
