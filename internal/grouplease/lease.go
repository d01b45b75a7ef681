// Package grouplease is the lease of a member of a group that Kafka's
// coordinator manages, in either group protocol (internal/kafkagroup,
// classic or KIP-848's): until when the
// member knows that the coordinator cannot have given its partitions to
// another member, so that the connector hands out messages only while it
// holds.
package grouplease

import (
	"sync"
	"sync/atomic"
	"time"
)

// Fraction is the part of a generation's lease term (the smaller of
// session.timeout.ms and the rebalance timeout) that a lease lasts, counted
// from the moment the member sent a request that the coordinator then
// answered as a member of the generation. The coordinator cannot have
// removed the member before that moment plus the whole term: it heard
// from the member no earlier than when the request was sent, its session
// timer restarts when it handles the request, and a rebalance that began
// after it answered waits the rebalance timeout for the member to rejoin.
// A lease of three quarters of the term therefore ends before any other
// member can be given the generation's partitions, with a quarter to
// spare for clock drift and for a message handed out just before the end.
//
// The classic protocol's renewals are the SyncGroup that started the
// generation and every heartbeat answered as a member of it; KIP-848's
// are heartbeats answered without error (the coordinator's revocation
// timer runs from its request, so they do not renew while a revocation
// is pending). One exception is outside the coordinator's timers: a
// static member replaced by a new instance with the same id, for which
// New takes a start (notBefore).
const Fraction = 0.75

// lapseCheckFraction is, as a part of a lease's length, the longest the
// lapse timer waits before it reads the clocks again. The timer runs on
// the monotonic clock, which stops while the machine is suspended, and the
// lease also ends when the wall clock passes its end: after a suspend
// longer than what was left of the lease, the lapse is signalled at most
// this part of the lease after resume.
const lapseCheckFraction = 0.25

// Lease tracks until when a generation is known to be current on the
// coordinator. It is renewed from send times: the SyncGroup that started
// the generation and every heartbeat answered without error. It lapses on
// its own, also in a process frozen past it (SIGSTOP, a long GC pause): it
// is measured on the monotonic clock from when requests were sent, never
// from when a buffered answer happens to be read. A lease may also start
// late (from): it does not hold before then, however recent its renewals.
//
// Waiters learn of every change, a lapse by the clock included: a timer
// armed at the end of the lease (re-armed on every renewal, stopped by
// Revoke) closes the change channel when the lease runs out.
type Lease struct {
	base  time.Time                                             // monotonic origin of from and until
	clock func(base time.Time) (mono time.Duration, wall int64) // readClocks; tests move the wall clock alone
	term  time.Duration                                         // Fraction of the lease term
	from  int64                                                 // does not hold while time.Since(base) < from (ns); set once
	until atomic.Int64                                          // held while time.Since(base) < until (ns); -1: gone for good
	// untilWall is until on the wall clock (Unix ns): the monotonic clock
	// stops while the machine is suspended, the wall clock is moved on at
	// resume, so a suspend longer than the lease ends it.
	untilWall atomic.Int64

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change, a lapse included
	start   *time.Timer   // signals the start at from; nil if it holds from base
	lapse   *time.Timer   // runs checkLapse at the end of the lease, or a check before it; nil until the first renewal
}

// New returns a lease of Fraction of term that does not hold
// before notBefore (the zero time: no such bound). It holds nothing until
// the first renew.
func New(term time.Duration, notBefore time.Time) *Lease {
	l := &Lease{base: time.Now(), clock: readClocks, term: time.Duration(float64(term) * Fraction), changed: make(chan struct{})}
	if d := notBefore.Sub(l.base); !notBefore.IsZero() && d > 0 {
		l.from = int64(d)
		l.start = time.AfterFunc(d, l.signal)
	}
	return l
}

// Held reports whether the lease holds now: atomic loads and a read of the
// monotonic clock, cheap enough for every message.
func (l *Lease) Held() bool {
	until := l.until.Load()
	mono, wall := l.clock(l.base)
	since := int64(mono)
	return until > 0 && since >= l.from && since < until && wall < l.untilWall.Load()
}

// readClocks reads, in one call, the monotonic time since base and the
// wall clock in Unix nanoseconds.
func readClocks(base time.Time) (time.Duration, int64) {
	now := time.Now()
	return now.Sub(base), now.UnixNano()
}

// Renew extends the lease to sentAt plus its term, unless it is gone or
// already lasts longer.
func (l *Lease) Renew(sentAt time.Time) {
	until := int64(sentAt.Sub(l.base) + l.term)
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.until.Load()
	if cur < 0 || until <= cur {
		return
	}
	// The wall deadline first: a reader that sees the new until with the
	// old wall deadline errs on the side of a lapsed lease.
	l.untilWall.Store(sentAt.UnixNano() + int64(l.term))
	l.until.Store(until)
	l.signalLocked()
	l.armLapseLocked()
}

// armLapseLocked sets the lapse timer to the end of the lease, on
// whichever clock comes first, or to a check lapseCheckFraction of the
// lease ahead if that is sooner. It stops the timer and returns false when
// the lease has run out or is gone: nothing is left to signal until the
// next renewal. l.mu is held.
func (l *Lease) armLapseLocked() bool {
	until := l.until.Load()
	mono, wall := l.clock(l.base)
	left := min(time.Duration(until)-mono, time.Duration(l.untilWall.Load()-wall))
	if until <= 0 || left <= 0 {
		if l.lapse != nil {
			l.lapse.Stop()
		}
		return false
	}
	if check := time.Duration(float64(l.term) * lapseCheckFraction); check > 0 {
		left = min(left, check)
	}
	if l.lapse == nil {
		l.lapse = time.AfterFunc(left, l.checkLapse)
	} else {
		l.lapse.Reset(left)
	}
	return true
}

// checkLapse runs on the lapse timer: it signals the lapse of the lease,
// or re-arms the timer while the lease runs (a check before its end, or a
// timer that raced a renewal).
func (l *Lease) checkLapse() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.until.Load() <= 0 || l.armLapseLocked() {
		return
	}
	l.signalLocked()
}

// Gone reports whether the lease was revoked.
func (l *Lease) Gone() bool { return l.until.Load() < 0 }

// Revoke ends the lease for good.
func (l *Lease) Revoke() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.start != nil {
		l.start.Stop()
	}
	if l.lapse != nil {
		l.lapse.Stop()
	}
	if l.until.Load() < 0 {
		return
	}
	l.until.Store(-1)
	l.signalLocked()
}

// signal tells waiters that the lease may have changed (its start came).
func (l *Lease) signal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.signalLocked()
}

func (l *Lease) signalLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Changed returns a channel closed at the next change of the lease: a
// renewal, its revocation, its start (New's notBefore), or its lapse when
// it runs out by the clock (no renewal came in time; after a suspend of
// the machine, within a quarter of the lease after resume).
func (l *Lease) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}
