package kafkagroup

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLeaseFromSendTimes: a lease lasts LeaseFraction of its term from the
// send time it was renewed with, never moves back, ends for good when
// revoked, and tells waiters about every change.
func TestLeaseFromSendTimes(t *testing.T) {
	l := newLease(400 * time.Millisecond) // lasts 300 ms from a send
	require.False(t, l.held(), "no answer yet")
	ch := l.changedCh()
	l.renew(time.Now())
	require.True(t, l.held())
	select {
	case <-ch:
	default:
		t.Fatal("renewal not signalled")
	}
	// An answer to a request sent long ago (read after a freeze) renews
	// nothing.
	ch = l.changedCh()
	l.renew(time.Now().Add(-time.Second))
	select {
	case <-ch:
		t.Fatal("an older send time changed the lease")
	default:
	}
	require.Eventually(t, func() bool { return !l.held() }, time.Second, 5*time.Millisecond)
	l.renew(time.Now())
	require.True(t, l.held(), "a new answer renews a lapsed lease")
	l.revoke()
	require.False(t, l.held())
	l.renew(time.Now())
	require.False(t, l.held(), "a revoked lease never holds again")
}

// TestGenerationEndRevokesLease: a generation told to rejoin keeps its
// lease until it lapses; one that lost its membership or was closed loses
// it at once, also after it had ended for a rebalance.
func TestGenerationEndRevokesLease(t *testing.T) {
	g := newGeneration(1, "m", "range", false, nil, time.Minute, time.Now())
	require.True(t, g.LeaseHeld())
	g.end(ErrRebalanceStarted)
	require.True(t, g.LeaseHeld())
	g.end(ErrMembershipLost)
	require.False(t, g.LeaseHeld())
	require.ErrorIs(t, g.Err(), ErrRebalanceStarted, "the first cause stays")
	g2 := newGeneration(2, "m", "range", false, nil, time.Minute, time.Now())
	g2.end(ErrMemberClosed)
	require.False(t, g2.LeaseHeld())
}
