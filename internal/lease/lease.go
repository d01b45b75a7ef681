package lease

import (
	"sync"
	"sync/atomic"
	"time"
)

// checkFraction is, as a part of a lease's length, the longest the lapse
// timer waits before it reads the clocks again. The timer runs on the
// monotonic clock, which stops while the machine is suspended, and the
// lease also ends when the wall clock passes its end: after a suspend
// longer than what was left of the lease, the lapse is signalled at most
// this part of the lease after resume.
const checkFraction = 0.25

// Signal tells waiters that one of the leases sharing it has changed: a
// channel closed at every change and replaced. The zero Signal is ready
// for use.
type Signal struct {
	mu sync.Mutex
	ch chan struct{} // nil until a waiter asks for it
}

// Changed returns a channel closed at the next change of a lease that
// shares s.
func (s *Signal) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// notify closes the channel waiters hold; the next Changed makes another.
func (s *Signal) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// Lease holds from a send time for its length, on the monotonic clock and
// on the wall clock, until it runs out unless renewed, or until it is
// revoked; it may also start late (New's notBefore). A timer armed at its
// end (re-armed on every change, stopped once it has run out or is gone)
// signals its lapse, so that what waits on it does not wait for the next
// answer to look again. It is safe for concurrent use; Held is an atomic
// load and one reading of the clocks, cheap enough for every message.
type Lease struct {
	base  time.Time                                             // monotonic origin of from and the deadlines
	clock func(base time.Time) (mono time.Duration, wall int64) // readClocks; tests move the wall clock alone
	from  time.Duration                                         // does not hold while the monotonic clock is before it; set once
	state atomic.Pointer[state]
	sig   *Signal

	mu    sync.Mutex  // serialises changes of state and guards the timers
	start *time.Timer // signals the start at from; nil if it holds from base
	lapse *time.Timer // runs checkLapse at the end of the lease, or a check before it; nil until the first grant
}

// state is immutable once published.
type state struct {
	length    time.Duration // how long a renewal holds
	until     time.Duration // held while time.Since(base) < until
	untilWall int64         // ... and the wall clock (Unix ns) is before this
	gone      bool          // revoked, for good
}

// New returns a lease that lasts length from each renewal, signalled on
// sig (a Signal of its own if nil), and does not hold before notBefore
// (the zero time: no such bound). It holds nothing until the first Renew
// or Grant.
func New(length time.Duration, notBefore time.Time, sig *Signal) *Lease {
	if sig == nil {
		sig = new(Signal)
	}
	l := &Lease{base: time.Now(), clock: readClocks, sig: sig}
	l.state.Store(&state{length: length})
	if d := notBefore.Sub(l.base); !notBefore.IsZero() && d > 0 {
		l.from = d
		l.start = time.AfterFunc(d, sig.notify)
	}
	return l
}

// readClocks reads, in one call, the monotonic time since base and the
// wall clock in Unix nanoseconds.
func readClocks(base time.Time) (time.Duration, int64) {
	now := time.Now()
	return now.Sub(base), now.UnixNano()
}

// Held reports whether the lease holds now: it has started, and both its
// deadlines are ahead of the clocks. A wall clock stepped forward only
// ends a lease early.
func (l *Lease) Held() bool {
	st := l.state.Load()
	mono, wall := l.clock(l.base)
	return !st.gone && mono >= l.from && mono < st.until && wall < st.untilWall
}

// Gone reports whether the lease was revoked.
func (l *Lease) Gone() bool { return l.state.Load().gone }

// Length is how long one renewal holds.
func (l *Lease) Length() time.Duration { return l.state.Load().length }

// Until returns when the lease ends on the monotonic clock, as a time
// with a monotonic reading (the wall clock may end it sooner). Before the
// first renewal it is the lease's creation; it says nothing of whether the
// lease is gone.
func (l *Lease) Until() time.Time { return l.base.Add(l.state.Load().until) }

// Renew extends the lease to sentAt plus its length, unless it is gone or
// already lasts longer.
func (l *Lease) Renew(sentAt time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.state.Load()
	until := sentAt.Sub(l.base) + cur.length
	if cur.gone || until <= cur.until {
		return
	}
	l.publishLocked(&state{length: cur.length, until: until, untilWall: sentAt.UnixNano() + int64(cur.length)})
}

// Grant makes the lease last length from sentAt, and length from each
// renewal after it, whether that ends it sooner or later than before;
// nothing once the lease is gone. length must be positive.
func (l *Lease) Grant(sentAt time.Time, length time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state.Load().gone {
		return
	}
	l.publishLocked(&state{length: length, until: sentAt.Sub(l.base) + length, untilWall: sentAt.UnixNano() + int64(length)})
}

// Revoke ends the lease for good.
func (l *Lease) Revoke() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.start != nil {
		l.start.Stop()
	}
	cur := l.state.Load()
	if cur.gone {
		l.stopLapseLocked()
		return
	}
	l.publishLocked(&state{length: cur.length, gone: true})
}

// Changed returns a channel closed at the next change of the lease (or of
// another lease sharing its Signal): a grant, a renewal, its revocation,
// its start (New's notBefore), or its lapse when it runs out by the clock
// (no renewal came in time; after a suspend of the machine, within a
// quarter of the lease after resume).
func (l *Lease) Changed() <-chan struct{} { return l.sig.Changed() }

// publishLocked makes st the lease's state, signals the change and arms
// the lapse timer for st. l.mu is held.
func (l *Lease) publishLocked(st *state) {
	l.state.Store(st)
	l.sig.notify()
	l.armLapseLocked(st)
}

// armLapseLocked sets the lapse timer to the end of st, on whichever clock
// comes first, or to a check checkFraction of the lease ahead if that is
// sooner. It stops the timer and returns false when st does not hold (it
// has run out or is gone): nothing is left to signal until the next
// change. l.mu is held.
func (l *Lease) armLapseLocked(st *state) bool {
	if st.gone {
		l.stopLapseLocked()
		return false
	}
	mono, wall := l.clock(l.base)
	left := min(st.until-mono, time.Duration(st.untilWall-wall))
	if left <= 0 {
		l.stopLapseLocked()
		return false
	}
	if check := time.Duration(float64(st.length) * checkFraction); check > 0 {
		left = min(left, check)
	}
	if l.lapse == nil {
		l.lapse = time.AfterFunc(left, l.checkLapse)
	} else {
		l.lapse.Reset(left)
	}
	return true
}

func (l *Lease) stopLapseLocked() {
	if l.lapse != nil {
		l.lapse.Stop()
	}
}

// checkLapse runs on the lapse timer: it signals the lapse of the lease,
// or re-arms the timer while the lease runs (a check before its end, or a
// timer that raced a renewal).
func (l *Lease) checkLapse() {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.state.Load()
	if st.gone || l.armLapseLocked(st) {
		return
	}
	l.sig.notify()
}
