package zksession

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestLeaseLapsesBeforeExpiryAndComesBack stalls the connection: the lease
// lapses on its own, before the server could expire the session, and holds
// again, for the same session, once the server answers again.
func TestLeaseLapsesBeforeExpiryAndComesBack(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	proxy, err := c.NewZooKeeperProxies()
	require.NoError(t, err)
	defer proxy.Close()
	const timeout = 8 * time.Second
	s := dialSession(t, ctx, SessionConfig{Connect: proxy.Connect(), SessionTimeout: timeout})
	id := s.ID()
	require.True(t, s.LeaseHeld(id))
	require.Equal(t, timeout, s.NegotiatedTimeout(id))
	require.NoError(t, s.CreateEphemeral(ctx, "/"+testcluster.UniqueName("lease")+"/eph", []byte("x")))

	stalled := time.Now()
	proxy.SetMode(testcluster.Blackhole)
	// A waiter on LeaseChanged learns of the lapse (review N1): the
	// channel closes when the lease runs out, not only on renewals.
	deadline := time.After(timeout)
	for {
		changed := s.LeaseChanged()
		if !s.LeaseHeld(id) {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("the lease did not lapse, or its lapse was not signalled, while the server was silent")
		}
	}
	lapsed := time.Since(stalled)
	require.LessOrEqual(t, lapsed, time.Duration(float64(timeout)*leaseFraction)+200*time.Millisecond,
		"the lease must end no later than leaseFraction of the timeout after the last answered request")

	// A bound operation waits for the lease instead of running.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, _, err = s.Bind(id).Get(short, "/")
	cancel()
	require.ErrorIs(t, err, ErrConnectionLoss)

	changed := s.LeaseChanged()
	proxy.SetMode(testcluster.Forward)
	select {
	case <-changed:
	case <-time.After(timeout):
		t.Fatal("the renewal was not signalled")
	}
	testwait.WaitFor(t, timeout, func() bool { return s.LeaseHeld(id) }, "the lease did not come back with the session")
	require.Equal(t, id, s.ID())
	_, _, err = s.Bind(id).Get(ctx, "/")
	require.NoError(t, err)
}

// TestBoundWriteNotReplayedOnNewSession is defect 2 of the safety issue: a
// write lost with the connection was replayed on whatever session came
// next, including the one replacing an expired session. A write bound to
// its session fails instead; an unbound one still goes through.
func TestBoundWriteNotReplayedOnNewSession(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	proxy, err := c.NewZooKeeperProxies()
	require.NoError(t, err)
	defer proxy.Close()
	const timeout = 2 * time.Second
	s := dialSession(t, ctx, SessionConfig{Connect: proxy.Connect(), SessionTimeout: timeout})
	events, unsubscribe := s.Subscribe()
	defer unsubscribe()
	in, ok := s.Current()
	require.True(t, ok)
	old := in.ID()
	require.Equal(t, s.ID(), old)
	base := "/" + testcluster.UniqueName("bound")
	require.NoError(t, s.EnsurePath(ctx, base))
	// The session's ephemeral node tells when the server has expired it.
	marker := base + "/marker"
	require.NoError(t, s.CreateEphemeral(ctx, marker, nil))
	obs := observer(t, ctx, c.ZKServers())

	proxy.SetMode(testcluster.Blackhole)
	bound := make(chan error, 1)
	unbound := make(chan error, 1)
	go func() { bound <- in.CreatePersistent(ctx, base+"/bound", []byte("b")) }()
	go func() { unbound <- s.CreatePersistent(ctx, base+"/unbound", []byte("u")) }()
	// Past the session timeout the server expires the session.
	awaitGone(t, ctx, obs, c.Chroot()+marker)
	proxy.SetMode(testcluster.Refuse)
	proxy.ResetAll()
	time.Sleep(200 * time.Millisecond)
	proxy.SetMode(testcluster.Forward)
	for ev := nextEvent(t, events, 30*time.Second); !ev.NewSession(); ev = nextEvent(t, events, 30*time.Second) {
	}
	require.NotEqual(t, old, s.ID())
	require.Equal(t, old, in.ID(), "a Bound names its session for good")

	select {
	case err := <-bound:
		require.ErrorIs(t, err, ErrSessionExpired)
	case <-time.After(20 * time.Second):
		t.Fatal("the bound write neither failed nor finished")
	}
	select {
	case err := <-unbound:
		require.NoError(t, err, "unbound operations still retry on the next session")
	case <-time.After(20 * time.Second):
		t.Fatal("the unbound write did not finish")
	}
	ok, _, err = s.Exists(ctx, base+"/bound")
	require.NoError(t, err)
	require.False(t, ok, "a write bound to the expired session ran on its successor")
	require.False(t, s.LeaseHeld(old))
	require.False(t, in.Held())
	require.True(t, s.LeaseHeld(s.ID()))
	// The Bound of the expired session fails at once; the current one's
	// writes go through.
	require.ErrorIs(t, in.SetOrCreate(ctx, base+"/bound", []byte("b")), ErrSessionExpired)
	next, ok := s.Current()
	require.True(t, ok)
	require.Equal(t, s.ID(), next.ID())
	require.NoError(t, next.SetOrCreate(ctx, base+"/bound", []byte("b")))
}
