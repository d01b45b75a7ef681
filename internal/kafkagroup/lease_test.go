package kafkagroup

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
)

// TestGenerationEndRevokesLease: a generation told to rejoin keeps its
// lease until it lapses; one that lost its membership or was closed loses
// it at once, also after it had ended for a rebalance.
func TestGenerationEndRevokesLease(t *testing.T) {
	g := newGeneration(1, "m", "range", false, nil, time.Minute, time.Now(), time.Time{}, nil)
	require.True(t, g.LeaseHeld())
	g.end(ErrRebalanceStarted)
	require.True(t, g.LeaseHeld())
	g.end(ErrMembershipLost)
	require.False(t, g.LeaseHeld())
	require.ErrorIs(t, g.Err(), ErrRebalanceStarted, "the first cause stays")
	g2 := newGeneration(2, "m", "range", false, nil, time.Minute, time.Now(), time.Time{}, nil)
	g2.end(ErrMemberClosed)
	require.False(t, g2.LeaseHeld())
}

// TestLeaseHoldUntil: a generation with a hold (a static member that may
// have replaced a live instance) has no lease before HoldUntil, however
// recent its renewals, tells waiters when the hold ends, and holds from
// then on; a hold in the past is none.
func TestLeaseHoldUntil(t *testing.T) {
	hold := time.Now().Add(300 * time.Millisecond)
	g := newGeneration(1, "m", "range", false, nil, time.Minute, time.Now(), hold, nil)
	require.Equal(t, hold, g.HoldUntil)
	ch := g.LeaseChanged()
	g.lease.Renew(time.Now())
	require.False(t, g.LeaseHeld(), "held before HoldUntil")
	select {
	case <-ch: // the renewal
	default:
		t.Fatal("renewal not signalled")
	}
	ch = g.LeaseChanged()
	select {
	case <-ch:
		require.False(t, time.Now().Before(hold), "signalled before HoldUntil")
	case <-time.After(5 * time.Second):
		t.Fatal("the end of the hold was not signalled")
	}
	require.True(t, g.LeaseHeld(), "not held after HoldUntil")
	g.end(ErrMembershipLost)
	require.False(t, g.LeaseHeld())

	past := newGeneration(2, "m", "range", false, nil, time.Minute, time.Now(), time.Now().Add(-time.Second), nil)
	require.True(t, past.HoldUntil.IsZero())
	require.True(t, past.LeaseHeld())

	// Revoked during the hold: never held, and the timer is stopped.
	g3 := newGeneration(3, "m", "range", false, nil, time.Minute, time.Now(), time.Now().Add(50*time.Millisecond), nil)
	g3.end(ErrMemberClosed)
	time.Sleep(100 * time.Millisecond)
	require.False(t, g3.LeaseHeld())
}

// TestHoldAfter: every JoinGroup that may have replaced another instance
// moves the member's hold to leaseFraction of min(session timeout,
// rebalance timeout) after it, never back.
func TestHoldAfter(t *testing.T) {
	m, err := New(Config{Brokers: []string{"127.0.0.1:1"}, Group: "g", Topics: []string{"t"}, InstanceID: "i",
		SessionTimeout: 8 * time.Second, RebalanceTimeout: time.Minute, HeartbeatInterval: time.Second})
	require.NoError(t, err)
	defer m.Close()
	at := time.Now()
	m.classic.holdAfter(at)
	require.Equal(t, at.Add(6*time.Second), m.classic.holdUntil)
	m.classic.holdAfter(at.Add(-time.Second))
	require.Equal(t, at.Add(6*time.Second), m.classic.holdUntil, "an earlier join moved the hold back")
}

// TestContinuedGenerationSharesLease: a generation that continues the
// previous one (cooperative protocol) takes its lease over: the kept
// partitions, fenced by the previous generation's lease, stay deliverable
// while the new one's heartbeats renew it; the previous generation's end
// no longer touches it, the new one's does.
func TestContinuedGenerationSharesLease(t *testing.T) {
	g1 := newGeneration(1, "m", "cooperative-sticky", false, nil, time.Minute, time.Now(), time.Time{}, nil)
	g1.end(ErrRebalanceStarted)
	g2 := newGeneration(2, "m", "cooperative-sticky", false, nil, time.Minute, time.Now(), time.Time{}, g1)
	require.True(t, g2.Continues)
	require.True(t, g1.LeaseHeld() && g2.LeaseHeld())
	g1.end(ErrMembershipLost) // a late refusal of g1's commit, say
	require.True(t, g1.LeaseHeld(), "g1's end revoked the lease g2 took over")
	g2.end(ErrMembershipLost)
	require.False(t, g1.LeaseHeld(), "the kept partitions' fence")
	require.False(t, g2.LeaseHeld())
}

// TestStaleCommitRefusalKeepsMembership: a commit of a generation the
// member is rejoining from, or older than one it has joined since, that
// the coordinator refuses with ILLEGAL_GENERATION is merely late (Java's
// RebalanceInProgressException): the generation keeps its lease, which
// the continuing generation takes over. Otherwise the refusal means the
// membership is lost.
func TestStaleCommitRefusalKeepsMembership(t *testing.T) {
	m, err := New(Config{Brokers: []string{"localhost:1"}, Group: "g", Topics: []string{"t"}, Assignors: []string{"cooperative-sticky"}})
	require.NoError(t, err)
	defer m.Close()
	gen := func(id int32) *Generation {
		g := newGeneration(id, "m", "cooperative-sticky", false, nil, time.Minute, time.Now(), time.Time{}, nil)
		g.end(ErrRebalanceStarted)
		return g
	}

	g := gen(4)
	m.classic.rejoining = g
	m.classic.commitRefused(g, sarama.ErrIllegalGeneration)
	require.True(t, g.LeaseHeld(), "refused while rejoining from it")
	m.classic.rejoining = nil

	m.classic.joinedGen = 5
	m.classic.commitRefused(g, sarama.ErrIllegalGeneration)
	require.True(t, g.LeaseHeld(), "refused after a later generation was joined")

	g5 := gen(5)
	m.classic.commitRefused(g5, sarama.ErrIllegalGeneration)
	require.False(t, g5.LeaseHeld(), "refused without a later join: lost")
}
