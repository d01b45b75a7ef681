package zksession

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/lease"
)

// leaseFraction is the part of the negotiated session timeout T a lease
// lasts, counted from a moment at which the ensemble's leader is known to
// have heard from the session (its base, see sessionLease). The leader
// cannot expire the session before the base plus T, so a lease of three
// quarters of T ends strictly before any other member can take over the
// session's ephemeral nodes, with a quarter of T to spare for clock drift
// and for a message handed out just before the lease ends.
const leaseFraction = 0.75

// quorumLagFraction bounds, as a part of T, how long after a server has
// received a request of ours the leader can still be unaware of it. The
// leader expires sessions; a follower passes its clients' activity on when
// the leader pings it, every half tick, and ZooKeeper's default bounds give
// T >= 2 ticks (minSessionTimeout), so half a tick is at most T/4. A
// sixteenth of T more covers the leader's ping jitter.
const quorumLagFraction = 0.25 + 1.0/16

// sessionLease tracks until when the current ZooKeeper session is known
// to be alive at the ensemble's leader, which is where sessions expire. It
// never depends on a goroutine that could block on ZooKeeper, and it
// lapses on its own (see internal/lease, whose Lease each session has:
// kept from send times on two clocks, signalling every change, a lapse by
// the clock included).
//
// A session's lease runs from a base (a send time) to base +
// leaseFraction*T. Bases come from answers that went through the leader:
//
//   - the answer to a connect request: the leader created the session, or
//     revalidated it for the server (touching it) after the request was
//     sent; the base is the request's send time;
//   - the answer to a sync or a write, sent at t: the server passed it to
//     the leader after t while following it. A follower reports the
//     requests it has received to the leader within the quorum lag, so
//     every request the server had answered before t - lag (quorumLag) is
//     known to the leader; the base is the send time of the latest such
//     request (or the connect request, if later).
//
// Answers to pings and reads renew nothing: a follower cut off from the
// leader answers them on its own for up to syncLimit ticks while the leader
// expires the session. The Session's heartbeat sends a sync every eighth of
// T, so a healthy lease stays about a third of T ahead, renewed (and its
// lapse timer re-armed) before the timer's check of the clocks, a quarter
// of the lease (3T/16) on, comes due.
//
// The leases of all the sessions a Session goes through share one Signal:
// what waits on LeaseChanged learns of a new session and of the loss of
// one as of a renewal or a lapse.
type sessionLease struct {
	changes lease.Signal
	mu      sync.Mutex // serialises changes of state
	state   atomic.Pointer[sessionState]
}

// sessionState is immutable once published.
type sessionState struct {
	session  int64
	timeout  time.Duration // the session timeout last granted (NegotiatedTimeout)
	shortest time.Duration // the shortest one ever granted to the session: the lease runs on it
	lease    *lease.Lease  // the session's; nil while session is 0
}

func newSessionLease() *sessionLease {
	l := &sessionLease{}
	l.state.Store(&sessionState{})
	return l
}

// leaseLength is how long a lease lasts in a session whose shortest
// granted timeout is timeout.
func leaseLength(timeout time.Duration) time.Duration {
	return time.Duration(float64(timeout) * leaseFraction)
}

// held reports whether session is the current session and its lease has
// not lapsed. It is called for every message handed out: two atomic
// loads and one reading of the clocks.
func (l *sessionLease) held(session int64) bool {
	st := l.state.Load()
	return session != 0 && st.session == session && st.lease.Held()
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
func (l *sessionLease) status(session int64) leaseStatus {
	st := l.state.Load()
	switch {
	case session == 0:
		return leaseGone
	case st.session == 0:
		return leaseLapsed // no session yet
	case st.session != session || st.lease.Gone():
		return leaseGone
	case st.lease.Held():
		return leaseHeld
	}
	return leaseLapsed
}

// changedCh returns a channel closed at the next change of the lease: a
// renewal, a new session, its loss, or its lapse when it runs out by the
// clock.
func (l *sessionLease) changedCh() <-chan struct{} { return l.changes.Changed() }

// connected records a connect response granting session with timeout to a
// connect request sent at sentAt: a new session, or a reconnection to the
// current one. A server may grant another timeout on reconnection than the
// session had, and which one the leader then expires the session by is not
// something the client can see (ZooKeeper 3.8 was seen to keep the
// original one), so the lease of a session runs on the shortest timeout it
// was ever granted: it is set to leaseFraction of that from sentAt, even if
// that is shorter than before. A new session ends the lease of the one
// before for good.
func (l *sessionLease) connected(session int64, sentAt time.Time, timeout time.Duration) {
	if session == 0 || timeout <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.state.Load()
	if cur.session == session {
		if cur.lease.Gone() {
			return
		}
		shortest := min(timeout, cur.shortest)
		l.state.Store(&sessionState{session: session, timeout: timeout, shortest: shortest, lease: cur.lease})
		cur.lease.Grant(sentAt, leaseLength(shortest))
		return
	}
	if cur.lease != nil {
		cur.lease.Revoke()
	}
	next := lease.New(leaseLength(timeout), time.Time{}, &l.changes)
	l.state.Store(&sessionState{session: session, timeout: timeout, shortest: timeout, lease: next})
	next.Grant(sentAt, leaseLength(timeout))
}

// confirmed extends the lease of session to base + leaseFraction*T, where
// base is a moment at which the leader is known to have heard from it.
func (l *sessionLease) confirmed(session int64, base time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur := l.state.Load(); session != 0 && cur.session == session {
		cur.lease.Renew(base)
	}
}

// shortestOf returns the shortest timeout granted to session, on which its
// lease runs, 0 if unknown.
func (l *sessionLease) shortestOf(session int64) time.Duration {
	st := l.state.Load()
	if st.session != session {
		return 0
	}
	return st.shortest
}

// timeoutOf returns the negotiated timeout of session, 0 if unknown.
func (l *sessionLease) timeoutOf(session int64) time.Duration {
	st := l.state.Load()
	if st.session != session {
		return 0
	}
	return st.timeout
}

// revoke ends the lease of session at once (the server said it expired),
// or whatever lease is held when session is 0 (the Session closes).
func (l *sessionLease) revoke(session int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.state.Load()
	if cur.session == 0 || (session != 0 && cur.session != session) {
		return
	}
	cur.lease.Revoke()
}

// LeaseHeld reports whether the ZooKeeper session id is known to be alive
// at the ensemble's leader at this moment: less than leaseFraction of the
// session timeout (the shortest the servers granted it) has passed since a moment at which the leader
// had heard from the session, as proven by an answer that went through the
// leader (a connect, or the Session's periodic sync; see sessionLease for
// the rule). While it holds, no other client can have taken over the
// session's ephemeral nodes. It is cheap enough to call before every
// message.
//
// The lease lapses on its own when the ensemble stops answering, also in a
// process that was frozen or a machine that was suspended: it is measured
// from send times, on the monotonic clock and the wall clock, never from
// when a buffered answer happens to be read. It comes back when the leader
// answers a request sent after the lapse in the same session; it never
// comes back once the session has expired.
func (s *Session) LeaseHeld(id int64) bool { return s.lease.held(id) }

// LeaseChanged returns a channel that is closed at the next change of the
// lease: a renewal, a new session, the loss of the session, or the lapse
// of the lease when it runs out by the clock (ZooKeeper has not answered
// in time; after a suspend of the machine, within a quarter of the lease
// after resume). To wait for the lease of a session, take the channel,
// then check LeaseHeld, then wait on the channel; to stop at its lapse,
// take the channel, check LeaseHeld, and look again when the channel is
// closed.
func (s *Session) LeaseChanged() <-chan struct{} { return s.lease.changedCh() }

// NegotiatedTimeout returns the session timeout the server granted to
// session id, 0 if unknown.
func (s *Session) NegotiatedTimeout(id int64) time.Duration { return s.lease.timeoutOf(id) }

// AwaitLease waits until the lease of session id holds. It fails with an
// error wrapping ErrSessionExpired once that session is gone (expired or
// replaced), with ErrClosed when the Session closes, and with an error
// wrapping ErrConnectionLoss and ctx's error when ctx ends first.
func (s *Session) AwaitLease(ctx context.Context, id int64) error { return s.awaitLease(ctx, id) }
