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
