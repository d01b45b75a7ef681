package zksession

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestLeaseOnEnsemble: CutOffFollower is item 3 of the
// ensemble safety issue, on a real three-server ensemble: a client
// connected to a follower that is cut off from the leader. The follower
// goes on answering the client's pings for syncLimit x tickTime (5 s here)
// while the leader hears nothing of the session and expires it after the
// session timeout (4 s), when a peer may take over its ephemeral nodes. A
// lease renewed by those pings outlived the expiry by seconds; renewed only
// by answers that went through the leader, it ends before.
//
// RenegotiatedTimeout (item 4) shares the ensemble: server 1 grants at
// most 4 s.
//
// It runs before the package's parallel tests, not beside them: they hold
// sessions of 2 to 12 s and bounds of a few seconds, which the start of
// its four JVMs on a machine of two cores could break.
func TestLeaseOnEnsemble(t *testing.T) {
	c := testcluster.Private(t, testcluster.Options{ZooKeeperServers: 3,
		ZooKeeperServerProperties: []map[string]string{1: {"maxSessionTimeout": "4000"}}})
	t.Run("CutOffFollower", func(t *testing.T) { testLeaseEndsBeforeLeaderExpiresSessionOfCutOffFollower(t, c) })
	t.Run("RenegotiatedTimeout", func(t *testing.T) { testLeaseFollowsRenegotiatedTimeout(t, c) })
}

func testLeaseEndsBeforeLeaderExpiresSessionOfCutOffFollower(t *testing.T, c *testcluster.Cluster) {
	ctx := testwait.Context(t, 3*time.Minute)
	require.NoError(t, c.WaitZooKeeperQuorum(ctx))
	leader, err := c.ZooKeeperLeader(ctx)
	require.NoError(t, err)
	follower := (leader + 1) % 3
	servers := c.ZKServers()
	const timeout = 4 * time.Second
	require.Greater(t, testcluster.ZooKeeperSyncLimit*testcluster.ZooKeeperTickTime, timeout/4,
		"the follower must answer pings longer than the lease's margin for this test to mean anything")

	s := dialSession(t, ctx, SessionConfig{Connect: servers[follower], SessionTimeout: timeout})
	id := s.ID()
	require.Equal(t, timeout, s.NegotiatedTimeout(id))
	marker := "/" + testcluster.UniqueName("cutoff")
	require.NoError(t, s.CreateEphemeral(ctx, marker, []byte("m")))
	obs := observer(t, ctx, []string{servers[leader]})

	lastHeld := watchLease(t, s, id)
	time.Sleep(timeout / 2) // a steady state of renewals
	require.NoError(t, c.IsolateZooKeeperServer(follower))
	defer func() { _ = c.HealZooKeeperServer(follower) }()
	isolated := time.Now()

	// The leader expires the session: its ephemeral node goes.
	awaitGone(t, ctx, obs, marker)
	expired := time.Now()
	// Give the follower's answers time to keep the lease alive if they do:
	// it answers until it gives up on the leader (syncLimit x tickTime
	// after the cut) and stops serving, which closes the client's
	// connection; the client names no other server, so nothing answers it
	// after that.
	testwait.WaitFor(t, time.Minute, func() bool {
		_, err := c.ZooKeeperServerMode(ctx, follower)
		return errors.Is(err, testcluster.ErrZooKeeperNotServing)
	}, "the isolated follower %d did not stop serving", follower)
	last := lastHeld()
	t.Logf("isolated at 0, lease last held at %v, session gone at %v", last.Sub(isolated).Round(time.Millisecond), expired.Sub(isolated).Round(time.Millisecond))
	require.True(t, last.Before(expired), "the lease held %v after the leader expired the session", last.Sub(expired))
	require.False(t, s.LeaseHeld(id))
}

// watchLease samples LeaseHeld(id) every millisecond until the test ends;
// the function it returns tells the last moment the lease held.
func watchLease(t *testing.T, s *Session, id int64) func() time.Time {
	var last atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if s.LeaseHeld(id) {
				last.Store(time.Now().UnixNano())
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var once sync.Once
	end := func() { once.Do(func() { close(stop); <-done }) }
	t.Cleanup(end)
	return func() time.Time {
		end()
		return time.Unix(0, last.Load())
	}
}

// testLeaseFollowsRenegotiatedTimeout is item 4 of the ensemble safety
// issue: a session moved to a server that grants a shorter timeout (4 s
// instead of the 10 s asked for here; the issue saw 30 s). The lease kept
// the old one (7.5 s of lease here, 22.5 s in the issue, and
// NegotiatedTimeout said the old timeout); it must run on the shortest
// timeout granted and report the new one. Which one the leader goes by is
// the server's business: here it is seen to keep the original, so the
// test waits out the original for the expiry; 10 s keeps the old lease
// (7.5 s) well above the bound the new one must keep (3.5 s).
func testLeaseFollowsRenegotiatedTimeout(t *testing.T, c *testcluster.Cluster) {
	ctx := testwait.Context(t, 3*time.Minute)
	ps, err := c.NewZooKeeperProxies()
	require.NoError(t, err)
	t.Cleanup(func() { _ = ps.Close() })
	generous, strict := ps.Proxy(0), ps.Proxy(1)
	strict.SetMode(testcluster.Refuse) // the first session goes to server 0
	const asked = 10 * time.Second
	s := dialSession(t, ctx, SessionConfig{Connect: generous.Addr() + "," + strict.Addr(), SessionTimeout: asked})
	id := s.ID()
	require.Equal(t, asked, s.NegotiatedTimeout(id))
	marker := "/" + testcluster.UniqueName("renegotiated")
	require.NoError(t, s.CreateEphemeral(ctx, marker, []byte("m")))
	obs := observer(t, ctx, []string{c.ZKServers()[2]})

	// Move the client to server 1, which grants at most 4 s.
	strict.SetMode(testcluster.Forward)
	generous.SetMode(testcluster.Refuse)
	generous.ResetAll()
	testwait.WaitFor(t, 30*time.Second, func() bool { return s.NegotiatedTimeout(id) == 4*time.Second }, "the session did not move to the strict server with the same id")
	require.Equal(t, id, s.ID())
	lastHeld := watchLease(t, s, id)
	time.Sleep(time.Second) // renewals on the new timeout

	// Cut the client off: the leader expires the session 4 s after it last
	// heard of it.
	strict.SetMode(testcluster.Blackhole)
	cut := time.Now()
	awaitGone(t, ctx, obs, marker)
	expired := time.Now()
	last := lastHeld()
	t.Logf("cut at 0, lease last held at %v, session gone at %v", last.Sub(cut).Round(time.Millisecond), expired.Sub(cut).Round(time.Millisecond))
	require.True(t, last.Before(expired), "the lease held %v after the leader expired the session", last.Sub(expired))
	// Whichever timeout the leader goes by (ZooKeeper 3.8 was seen to
	// keep the original), the lease runs on the shortest granted.
	require.Less(t, last.Sub(cut), 3*time.Second+500*time.Millisecond, "the lease outlived 3/4 of the 4 s timeout")
}
