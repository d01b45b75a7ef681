package grouplease

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLeaseFromSendTimes: a lease lasts Fraction of its term from the
// send time it was renewed with, never moves back, ends for good when
// revoked, and tells waiters about every change.
func TestLeaseFromSendTimes(t *testing.T) {
	l := New(400*time.Millisecond, time.Time{}) // lasts 300 ms from a send
	require.False(t, l.Held(), "no answer yet")
	ch := l.Changed()
	l.Renew(time.Now())
	require.True(t, l.Held())
	select {
	case <-ch:
	default:
		t.Fatal("renewal not signalled")
	}
	// An answer to a request sent long ago (read after a freeze) renews
	// nothing.
	ch = l.Changed()
	l.Renew(time.Now().Add(-time.Second))
	select {
	case <-ch:
		t.Fatal("an older send time changed the lease")
	default:
	}
	require.Eventually(t, func() bool { return !l.Held() }, time.Second, 5*time.Millisecond)
	l.Renew(time.Now())
	require.True(t, l.Held(), "a new answer renews a lapsed lease")
	l.Revoke()
	require.False(t, l.Held())
	l.Renew(time.Now())
	require.False(t, l.Held(), "a revoked lease never holds again")
}

// TestLeaseEndsWhenWallClockPassesIt: the monotonic clock stops while the
// machine is suspended, the wall clock is moved on at resume; a lease
// whose end the wall clock has passed no longer holds.
func TestLeaseEndsWhenWallClockPassesIt(t *testing.T) {
	l := New(time.Minute, time.Time{})
	var suspended atomic.Int64
	l.clock = func(base time.Time) (time.Duration, int64) {
		mono, wall := readClocks(base)
		return mono, wall + suspended.Load()
	}
	l.Renew(time.Now())
	require.True(t, l.Held())
	suspended.Store(int64(time.Minute)) // monotonic time did not move
	require.False(t, l.Held(), "a suspend longer than the lease must end it")
}

// awaitChange waits for ch to close, at most d, and returns when it did.
func awaitChange(t *testing.T, ch <-chan struct{}, d time.Duration, msg string) time.Time {
	t.Helper()
	select {
	case <-ch:
		return time.Now()
	case <-time.After(d):
		t.Fatal(msg)
		return time.Time{}
	}
}

// TestLeaseSignalsItsLapse (review N1): waiters on the lease learn of a
// lapse by the clock, not only of renewals and revocations. Changed closes
// when the lease runs out, never before; a renewal moves the lapse on; a
// revoked lease signals nothing more.
func TestLeaseSignalsItsLapse(t *testing.T) {
	l := New(400*time.Millisecond, time.Time{}) // lasts 300 ms from a send
	lasts := 300 * time.Millisecond
	sent := time.Now()
	l.Renew(sent)
	require.True(t, l.Held())
	at := awaitChange(t, l.Changed(), 10*time.Second, "the lapse was not signalled")
	require.False(t, l.Held(), "signalled while the lease held")
	require.GreaterOrEqual(t, at.Sub(sent), lasts)

	// Renewed after the lapse, and again before its end: the lapse comes
	// at the end of the last renewal.
	l.Renew(time.Now())
	time.Sleep(lasts / 2)
	renewed := time.Now()
	l.Renew(renewed)
	at = awaitChange(t, l.Changed(), 10*time.Second, "the lapse after a renewal was not signalled")
	require.False(t, l.Held())
	require.GreaterOrEqual(t, at.Sub(renewed), lasts, "signalled at the end of the lease before the renewal")

	// A revoked lease has nothing left to signal.
	l.Renew(time.Now())
	require.True(t, l.Held())
	l.Revoke()
	ch := l.Changed()
	select {
	case <-ch:
		t.Fatal("a revoked lease signalled a lapse")
	case <-time.After(2 * lasts):
	}
}

// TestLeaseSignalsWallClockLapse: the lapse timer runs on the monotonic
// clock, which stops while the machine is suspended; a lease whose end the
// wall clock has passed is signalled within lapseCheckFraction of the
// lease, not at its monotonic end.
func TestLeaseSignalsWallClockLapse(t *testing.T) {
	l := New(8*time.Second, time.Time{}) // lasts 6 s, checked every 1.5 s
	var suspended atomic.Int64
	l.clock = func(base time.Time) (time.Duration, int64) {
		mono, wall := readClocks(base)
		return mono, wall + suspended.Load()
	}
	sent := time.Now()
	l.Renew(sent)
	ch := l.Changed()
	suspended.Store(int64(time.Minute)) // a resume after a minute's suspend
	at := awaitChange(t, ch, 10*time.Second, "the lapse was not signalled")
	require.False(t, l.Held())
	// The first check, a quarter of the lease (1.5 s) after the renewal,
	// finds the lapse; a second of slack for a loaded machine.
	require.Less(t, at.Sub(sent), 2500*time.Millisecond, "not signalled at the first check after the wall clock passed the lease's end")
}
