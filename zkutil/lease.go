package zkutil

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// leaseFraction is the part of the negotiated session timeout T a lease
// lasts, counted from a moment at which the ensemble's leader is known to
// have heard from the session (its base, see lease). The leader cannot
// expire the session before the base plus T, so a lease of three quarters
// of T ends strictly before any other member can take over the session's
// ephemeral nodes, with a quarter of T to spare for clock drift and for a
// message handed out just before the lease ends.
const leaseFraction = 0.75

// lapseCheckFraction is, as a part of a lease's length, the longest the
// lapse timer waits before it reads the clocks again. The timer runs on
// the monotonic clock, which stops while the machine is suspended, and the
// lease also ends when the wall clock passes its end: after a suspend
// longer than what was left of the lease, the lapse is signalled at most
// this part of the lease after resume. A healthy lease is renewed (and its
// timer re-armed) every eighth of T, before a check of 3T/16 comes due.
const lapseCheckFraction = 0.25

// quorumLagFraction bounds, as a part of T, how long after a server has
// received a request of ours the leader can still be unaware of it. The
// leader expires sessions; a follower passes its clients' activity on when
// the leader pings it, every half tick, and ZooKeeper's default bounds give
// T >= 2 ticks (minSessionTimeout), so half a tick is at most T/4. A
// sixteenth of T more covers the leader's ping jitter.
const quorumLagFraction = 0.25 + 1.0/16

// lease tracks until when the current ZooKeeper session is known to be
// alive at the ensemble's leader, which is where sessions expire. It never
// depends on a goroutine that could block on ZooKeeper, and it lapses on
// its own: a process frozen past it (GC pause, SIGSTOP) finds it lapsed
// when it wakes, whatever is buffered in its sockets.
//
// A lease runs from a base (a send time on the monotonic clock) to base +
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
// T, so a healthy lease stays about a third of T ahead.
//
// A lease also ends when the wall clock passes its end: the monotonic
// clock stops while the machine is suspended, the wall clock is moved on
// at resume, so a suspend longer than the lease ends it.
//
// Waiters learn of every change, a lapse by the clock included: a timer
// armed at the end of the lease (re-armed on every change, stopped once
// the lease is gone) closes the change channel when the lease runs out, so
// that what waits on the lease (a Kafka commit cut off at the lapse, say)
// does not wait for the next answer from ZooKeeper to look again.
type lease struct {
	base  time.Time // monotonic origin of the nanosecond deadlines
	state atomic.Pointer[leaseState]
	clock func(base time.Time) (mono time.Duration, wall int64) // readClocks; tests move the wall clock alone

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change of state, a lapse included
	lapse   *time.Timer   // runs checkLapse at the end of the lease, or a check before it; nil until the first lease
}

// leaseState is immutable once published.
type leaseState struct {
	session   int64
	until     time.Duration // held while time.Since(base) < until
	untilWall int64         // ... and the wall clock (Unix ns) is before this
	timeout   time.Duration // the session timeout last granted (NegotiatedTimeout)
	shortest  time.Duration // the shortest one ever granted to the session: the lease runs on it
	dead      bool          // revoked: the session is gone for good
}

func newLease() *lease {
	l := &lease{base: time.Now(), clock: readClocks, changed: make(chan struct{})}
	l.state.Store(&leaseState{})
	return l
}

// held reports whether session is the lease's session and the lease has not
// lapsed. It is called for every message handed out: an atomic load and
// one reading of the clocks.
func (l *lease) held(session int64) bool {
	st := l.state.Load()
	if session == 0 || st.session != session {
		return false
	}
	return st.holdsAt(l.clock(l.base))
}

// readClocks reads, in one call, the monotonic time since base and the
// wall clock in Unix nanoseconds.
func readClocks(base time.Time) (time.Duration, int64) {
	now := time.Now()
	return now.Sub(base), now.UnixNano()
}

// holdsAt reports whether st's deadlines are both ahead of the clocks: the
// monotonic one (immune to clock steps) and the wall clock (which counts a
// suspend of the machine). A wall clock stepped forward only ends a lease
// early.
func (st *leaseState) holdsAt(mono time.Duration, wall int64) bool {
	return mono < st.until && wall < st.untilWall
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
	case st.holdsAt(l.clock(l.base)):
		return leaseHeld
	}
	return leaseLapsed
}

// changedCh returns a channel closed at the next change of the lease: a
// renewal, a new session, its loss, or its lapse when it runs out by the
// clock.
func (l *lease) changedCh() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// connected records a connect response granting session with timeout to a
// connect request sent at sentAt: a new session, or a reconnection to the
// current one. A server may grant another timeout on reconnection than the
// session had, and which one the leader then expires the session by is not
// something the client can see (ZooKeeper 3.8 was seen to keep the
// original one), so the lease of a session runs on the shortest timeout it
// was ever granted: it is set to leaseFraction of that from sentAt, even if
// that is shorter than before.
func (l *lease) connected(session int64, sentAt time.Time, timeout time.Duration) {
	if session == 0 || timeout <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.state.Load()
	if cur.session == session && cur.dead {
		return
	}
	shortest := timeout
	if cur.session == session && cur.shortest > 0 {
		shortest = min(shortest, cur.shortest)
	}
	d := time.Duration(float64(shortest) * leaseFraction)
	l.publishLocked(&leaseState{session: session, timeout: timeout, shortest: shortest,
		until: sentAt.Sub(l.base) + d, untilWall: sentAt.UnixNano() + int64(d)})
}

// confirmed extends the lease of session to base + leaseFraction*T, where
// base is a moment at which the leader is known to have heard from it.
func (l *lease) confirmed(session int64, base time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.state.Load()
	if session == 0 || cur.session != session || cur.dead || cur.shortest <= 0 {
		return
	}
	d := time.Duration(float64(cur.shortest) * leaseFraction)
	until := base.Sub(l.base) + d
	if until <= cur.until {
		return
	}
	next := *cur
	next.until, next.untilWall = until, base.UnixNano()+int64(d)
	l.publishLocked(&next)
}

// publishLocked makes st the lease's state, signals the change and arms
// the lapse timer for st. l.mu is held.
func (l *lease) publishLocked(st *leaseState) {
	l.state.Store(st)
	l.signalLocked()
	l.armLapseLocked(st)
}

func (l *lease) signalLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// armLapseLocked sets the lapse timer to the end of st, on whichever clock
// comes first, or to a check lapseCheckFraction of the lease ahead if that
// is sooner. It stops the timer and returns false when st does not hold
// (it lapsed, was revoked, or has no session): nothing is left to signal
// until the next publish. l.mu is held.
func (l *lease) armLapseLocked(st *leaseState) bool {
	if st.session == 0 || st.dead {
		l.stopLapseLocked()
		return false
	}
	mono, wall := l.clock(l.base)
	left := min(st.until-mono, time.Duration(st.untilWall-wall))
	if left <= 0 {
		l.stopLapseLocked()
		return false
	}
	if check := time.Duration(float64(st.shortest) * leaseFraction * lapseCheckFraction); check > 0 {
		left = min(left, check)
	}
	if l.lapse == nil {
		l.lapse = time.AfterFunc(left, l.checkLapse)
	} else {
		l.lapse.Reset(left)
	}
	return true
}

func (l *lease) stopLapseLocked() {
	if l.lapse != nil {
		l.lapse.Stop()
	}
}

// checkLapse runs on the lapse timer: it signals the lapse of the current
// lease, or re-arms the timer while the lease holds (a check before its
// end, or a timer that raced a renewal).
func (l *lease) checkLapse() {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.state.Load()
	if st.session == 0 || st.dead || l.armLapseLocked(st) {
		return
	}
	l.signalLocked()
}

// shortestOf returns the shortest timeout granted to session, on which its
// lease runs, 0 if unknown.
func (l *lease) shortestOf(session int64) time.Duration {
	st := l.state.Load()
	if st.session != session {
		return 0
	}
	return st.shortest
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
	l.publishLocked(&leaseState{session: cur.session, timeout: cur.timeout, shortest: cur.shortest, dead: true})
}

// LeaseHeld reports whether the ZooKeeper session id is known to be alive
// at the ensemble's leader at this moment: less than leaseFraction of the
// session timeout (the shortest the servers granted it) has passed since a moment at which the leader
// had heard from the session, as proven by an answer that went through the
// leader (a connect, or the Session's periodic sync; see lease for the
// rule). While it holds, no other client can have taken over the
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
