package zkutil

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// LeaseFraction is the part of the negotiated session timeout a lease
// lasts, counted from the moment the client sent a request that the server
// then answered. The server cannot have expired the session before that
// moment plus the whole timeout (it last heard from the client no earlier
// than when the request was sent), so a lease of three quarters of it ends
// strictly before any other member can take over the session's ephemeral
// nodes, with a quarter of the timeout to spare for clock drift and for a
// message handed out just before the lease ends. go-zookeeper pings every
// third of the timeout, so a healthy session renews its lease about twice
// per lease.
const LeaseFraction = 0.75

// lease tracks until when the current ZooKeeper session is known to be
// alive on the server. It is renewed from the wire: every answer of the
// server to a request of the session proves that the server heard from the
// session no earlier than when that request was sent. It never depends on a
// goroutine that could block on ZooKeeper, and it lapses on its own: a
// process frozen past it (GC pause, SIGSTOP, VM suspend) finds it lapsed
// when it wakes, whatever is buffered in its sockets.
type lease struct {
	base  time.Time // monotonic origin of the nanosecond deadlines
	state atomic.Pointer[leaseState]

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change of state
}

// leaseState is immutable once published.
type leaseState struct {
	session int64
	until   time.Duration // held while time.Since(base) < until
	timeout time.Duration // negotiated session timeout
	dead    bool          // revoked: the session is gone for good
}

func newLease() *lease {
	l := &lease{base: time.Now(), changed: make(chan struct{})}
	l.state.Store(&leaseState{})
	return l
}

// held reports whether session is the lease's session and the lease has not
// lapsed. It is called for every message handed out: an atomic load and a
// read of the monotonic clock.
func (l *lease) held(session int64) bool {
	st := l.state.Load()
	return session != 0 && st.session == session && time.Since(l.base) < st.until
}

// leaseStatus is what status reports.
type leaseStatus int

const (
	leaseLapsed leaseStatus = iota // not held now; may be renewed
	leaseHeld
	leaseGone // the session expired or was replaced: never again
)

// status tells whether the lease of session holds, has lapsed for now, or
// is gone for good.
func (l *lease) status(session int64) leaseStatus {
	st := l.state.Load()
	switch {
	case session == 0:
		return leaseGone
	case st.session == 0:
		return leaseLapsed // no session yet
	case st.session != session || st.dead:
		return leaseGone
	case time.Since(l.base) < st.until:
		return leaseHeld
	}
	return leaseLapsed
}

// changedCh returns a channel closed at the next change of the lease: a
// renewal, a new session, or its loss.
func (l *lease) changedCh() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// renew extends the lease of session to sentAt + timeout*LeaseFraction,
// where sentAt is when the client sent a request the server answered in
// that session. newSession is set for the answer to a connect request: it
// may start a lease for another session; other answers only extend the
// lease of the session it already tracks.
func (l *lease) renew(session int64, sentAt time.Time, timeout time.Duration, newSession bool) {
	if session == 0 || timeout <= 0 {
		return
	}
	until := sentAt.Sub(l.base) + time.Duration(float64(timeout)*LeaseFraction)
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.state.Load()
	switch {
	case cur.session == session:
		if cur.dead || until <= cur.until {
			return
		}
	case !newSession:
		return // an answer of a session the lease no longer tracks
	}
	l.state.Store(&leaseState{session: session, until: until, timeout: timeout})
	close(l.changed)
	l.changed = make(chan struct{})
}

// timeoutOf returns the negotiated timeout of session, 0 if unknown.
func (l *lease) timeoutOf(session int64) time.Duration {
	st := l.state.Load()
	if st.session != session {
		return 0
	}
	return st.timeout
}

// revoke ends the lease of session at once (the server said it expired),
// or whatever lease is held when session is 0 (the Session closes).
func (l *lease) revoke(session int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.state.Load()
	if cur.session == 0 || cur.dead || (session != 0 && cur.session != session) {
		return
	}
	l.state.Store(&leaseState{session: cur.session, until: 0, timeout: cur.timeout, dead: true})
	close(l.changed)
	l.changed = make(chan struct{})
}

// LeaseHeld reports whether the ZooKeeper session id is known to be alive
// on the server at this moment: the server answered a request of the
// session sent less than LeaseFraction of the negotiated session timeout
// ago. While it holds, no other client can have taken over the session's
// ephemeral nodes. It is cheap enough to call before every message.
//
// The lease lapses on its own when the server stops answering, also in a
// process that was frozen: it is measured from send times on the
// monotonic clock, never from when a buffered answer happens to be read.
// It comes back when the server answers a request sent after the lapse in
// the same session; it never comes back once the session has expired.
func (s *Session) LeaseHeld(id int64) bool { return s.lease.held(id) }

// LeaseChanged returns a channel that is closed at the next change of the
// lease: a renewal, a new session, or the loss of the session. To wait for
// the lease of a session, take the channel, then check LeaseHeld, then
// wait on the channel.
func (s *Session) LeaseChanged() <-chan struct{} { return s.lease.changedCh() }

// NegotiatedTimeout returns the session timeout the server granted to
// session id, 0 if unknown.
func (s *Session) NegotiatedTimeout(id int64) time.Duration { return s.lease.timeoutOf(id) }

// AwaitLease waits until the lease of session id holds. It fails with an
// error wrapping ErrSessionExpired once that session is gone (expired or
// replaced), with ErrClosed when the Session closes, and with an error
// wrapping ErrConnectionLoss and ctx's error when ctx ends first.
func (s *Session) AwaitLease(ctx context.Context, id int64) error { return s.awaitLease(ctx, id) }
