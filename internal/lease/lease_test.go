package lease

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// suspendable makes l read a wall clock that a test moves on alone, as a
// resume after a suspend does while the monotonic clock stood still.
func suspendable(l *Lease) *atomic.Int64 {
	var suspended atomic.Int64
	l.clock = func(base time.Time) (time.Duration, int64) {
		mono, wall := readClocks(base)
		return mono, wall + suspended.Load()
	}
	return &suspended
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

// requireSignalled fails unless ch is closed now.
func requireSignalled(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	default:
		t.Fatal(msg)
	}
}

// TestRenewFromSendTimes: a lease lasts its length from the send time it
// was renewed with, never moves back, ends for good when revoked, and
// tells waiters about every change.
func TestRenewFromSendTimes(t *testing.T) {
	l := New(300*time.Millisecond, time.Time{}, nil)
	require.False(t, l.Held(), "no answer yet")
	ch := l.Changed()
	sent := time.Now()
	l.Renew(sent)
	require.True(t, l.Held())
	require.Zero(t, l.Until().Sub(sent.Add(300*time.Millisecond)))
	requireSignalled(t, ch, "renewal not signalled")
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
	ch = l.Changed()
	l.Revoke()
	requireSignalled(t, ch, "revocation not signalled")
	require.False(t, l.Held())
	require.True(t, l.Gone())
	l.Renew(time.Now())
	l.Grant(time.Now(), time.Minute)
	require.False(t, l.Held(), "a revoked lease never holds again")
}

// TestGrantSetsTheLength: a grant makes the lease last its length from its
// send time even when that ends it sooner than before, and renewals after
// it last that length.
func TestGrantSetsTheLength(t *testing.T) {
	l := New(time.Minute, time.Time{}, nil)
	now := time.Now()
	l.Grant(now, 30*time.Second)
	require.Zero(t, l.Until().Sub(now.Add(30*time.Second)))
	l.Grant(now, 3*time.Second)
	require.Equal(t, 3*time.Second, l.Length())
	require.Zero(t, l.Until().Sub(now.Add(3*time.Second)), "a shorter grant shortens the lease")
	require.True(t, l.Held())
	l.Renew(now.Add(time.Second))
	require.Zero(t, l.Until().Sub(now.Add(4*time.Second)), "renewals last the granted length")
	// A grant from a send time longer ago than its length holds nothing.
	l.Grant(now.Add(-time.Minute), 3*time.Second)
	require.False(t, l.Held())
	l.Revoke()
}

// TestDoesNotHoldBeforeItsStart: a lease with a start (notBefore) does not
// hold before it, however recent its renewals, and signals its start.
func TestDoesNotHoldBeforeItsStart(t *testing.T) {
	start := time.Now().Add(200 * time.Millisecond)
	l := New(time.Minute, start, nil)
	l.Renew(time.Now())
	require.False(t, l.Held(), "held before its start")
	at := awaitChange(t, l.Changed(), 10*time.Second, "the start was not signalled")
	require.False(t, at.Before(start))
	require.True(t, l.Held())
	l.Revoke()
}

// TestEndsWhenWallClockPassesIt: the monotonic clock stops while the
// machine is suspended, the wall clock is moved on at resume; a lease
// whose end the wall clock has passed no longer holds.
func TestEndsWhenWallClockPassesIt(t *testing.T) {
	l := New(time.Minute, time.Time{}, nil)
	suspended := suspendable(l)
	l.Renew(time.Now())
	require.True(t, l.Held())
	suspended.Store(int64(time.Minute)) // monotonic time did not move
	require.False(t, l.Held(), "a suspend longer than the lease must end it")
	l.Revoke()
}

// TestSignalsItsLapse (review N1): waiters on the lease (a Kafka commit in
// flight, cut off at the lapse) learn of a lapse by the clock, not only of
// renewals and revocations. Changed closes when the lease runs out, never
// before; a renewal moves the lapse on; a revoked lease signals nothing
// more.
func TestSignalsItsLapse(t *testing.T) {
	const lasts = 300 * time.Millisecond
	l := New(lasts, time.Time{}, nil)
	sent := time.Now()
	l.Renew(sent)
	require.True(t, l.Held())
	at := awaitChange(t, l.Changed(), 10*time.Second, "the lapse was not signalled")
	require.False(t, l.Held(), "signalled while the lease held")
	require.GreaterOrEqual(t, at.Sub(sent), lasts)

	// Renewed after the lapse, and again before its end: the lapse comes
	// at the end of the last renewal.
	l.Renew(time.Now())
	require.True(t, l.Held())
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

// TestSignalsWallClockLapse: the lapse timer runs on the monotonic clock,
// which stops while the machine is suspended; a lease whose end the wall
// clock has passed is signalled within checkFraction of the lease, not at
// its monotonic end.
func TestSignalsWallClockLapse(t *testing.T) {
	l := New(6*time.Second, time.Time{}, nil) // checked every 1.5 s
	suspended := suspendable(l)
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

// TestLeasesShareASignal: the changes of every lease on one Signal close
// its channel (zkutil's leases of successive sessions), and a lease's
// Changed is that channel.
func TestLeasesShareASignal(t *testing.T) {
	var sig Signal
	a, b := New(time.Minute, time.Time{}, &sig), New(time.Minute, time.Time{}, &sig)
	ch := sig.Changed()
	require.Equal(t, ch, a.Changed())
	a.Renew(time.Now())
	requireSignalled(t, ch, "a change of the first lease not signalled")
	ch = sig.Changed()
	b.Renew(time.Now())
	requireSignalled(t, ch, "a change of the second lease not signalled")
	require.True(t, a.Held())
	a.Revoke()
	b.Revoke()
}
