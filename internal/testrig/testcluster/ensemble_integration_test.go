package testcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// zkClient is a go-zookeeper connection with its session events.
type zkClient struct {
	*zk.Conn
	states chan zk.State
}

func connectZK(t *testing.T, ctx context.Context, servers []string, timeout time.Duration) *zkClient {
	t.Helper()
	conn, events, err := zk.Connect(servers, timeout, zk.WithLogger(discardLogger{}))
	require.NoError(t, err)
	t.Cleanup(conn.Close)
	c := &zkClient{Conn: conn, states: make(chan zk.State, 256)}
	go func() {
		for ev := range events {
			if ev.Type == zk.EventSession {
				select {
				case c.states <- ev.State:
				default:
				}
			}
		}
	}()
	waitState(t, ctx, c.states, zk.StateHasSession)
	return c
}

// followers are the indexes of the servers other than leader.
func followers(c *Cluster, leader int) []int {
	var out []int
	for i := range c.ZooKeeperServers() {
		if i != leader {
			out = append(out, i)
		}
	}
	return out
}

// waitMode waits until server i reports mode ("" for: runs but does not
// serve) and returns how long that took.
func waitMode(t *testing.T, ctx context.Context, c *Cluster, i int, want string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var last string
	var lastErr error
	what := fmt.Sprintf("ZooKeeper server %d in mode %q", i, want)
	if want == "" {
		what = fmt.Sprintf("ZooKeeper server %d runs but does not serve", i)
	}
	testwait.WaitFor(t, timeout, func() bool {
		last, lastErr = c.ZooKeeperServerMode(ctx, i)
		if want == "" {
			return errors.Is(lastErr, ErrZooKeeperNotServing)
		}
		return lastErr == nil && last == want
	}, "%s", what)
	return time.Since(start)
}

// TestEnsemble runs the fault tests of a three-server ensemble under a
// broker on one private cluster, one after the other: each leaves every
// server running and serving, in a quorum, as it found them, and starting
// the cluster (four JVMs) is much of what each would cost alone.
func TestEnsemble(t *testing.T) {
	c := parallelPrivate(t, Options{ZooKeeperServers: 3})
	if !t.Run("KillAndRestart", func(t *testing.T) { testEnsembleKillAndRestart(t, c) }) {
		t.Fatal("IsolateAndPause not run: KillAndRestart failed and may have left the ensemble without a quorum")
	}
	t.Run("IsolateAndPause", func(t *testing.T) { testEnsembleIsolateAndPause(t, c) })
}

// testEnsembleKillAndRestart kills and restarts a follower, then the
// leader, of a three-server ensemble under a broker and a client session:
// the ensemble keeps or regains a leader, the session outlives each
// downtime (shorter than its timeout), the broker stays registered. Then
// it kills two of the three (no server serves: no quorum), restarts one
// (it serves again), and kills and restarts the whole ensemble with the
// single-server controls.
func testEnsembleKillAndRestart(t *testing.T, c *Cluster) {
	ctx := testwait.Context(t, 10*time.Minute)
	require.NoError(t, c.WaitZooKeeperQuorum(ctx))

	servers := c.ZKServers()
	require.Len(t, servers, 3)
	require.Equal(t, strings.Join(servers, ",")+DefaultChroot, c.ZKConnect())
	require.Equal(t, strings.Join(servers, ","), c.ZKServer())
	leader, err := c.ZooKeeperLeader(ctx)
	require.NoError(t, err)
	modes := map[string]int{}
	for i := range servers {
		m, err := c.ZooKeeperServerMode(ctx, i)
		require.NoError(t, err)
		modes[m]++
	}
	require.Equal(t, map[string]int{"leader": 1, "follower": 2}, modes)
	t.Logf("ensemble %s: leader is server %d", c.ZKConnect(), leader)

	client := connectZK(t, ctx, servers, 8*time.Second)
	session := client.SessionID()
	path := "/" + UniqueName("ensemble-ephemeral")
	_, err = client.Create(path, []byte("x"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	stillThere := func(what string) {
		t.Helper()
		testwait.WaitFor(t, time.Minute, func() bool {
			ok, _, err := client.Exists(path)
			return err == nil && ok
		}, "%s", "the client serves again after "+what)
		require.Equal(t, session, client.SessionID(), "the client's session survives %s", what)
		ids, err := c.RegisteredBrokers(ctx)
		require.NoError(t, err)
		require.Equal(t, []int{0}, ids, "the broker stays registered through %s", what)
	}

	// A follower.
	f := followers(c, leader)[0]
	require.NoError(t, c.KillZooKeeperServer(f))
	require.False(t, c.ZooKeeperServerRunning(f))
	_, err = c.ZooKeeperServerMode(ctx, f)
	require.Error(t, err, "a killed server does not answer")
	require.NoError(t, c.WaitZooKeeperQuorum(ctx), "two of three keep the quorum")
	still, err := c.ZooKeeperLeader(ctx)
	require.NoError(t, err)
	require.Equal(t, leader, still, "losing a follower does not move leadership")
	_, err = client.Set(path, []byte("written without a follower"), -1)
	require.NoError(t, err)
	require.NoError(t, c.RestartZooKeeperServer(ctx, f))
	mode, err := c.ZooKeeperServerMode(ctx, f)
	require.NoError(t, err)
	require.Equal(t, "follower", mode)
	stillThere("a follower's kill and restart")

	// The leader.
	require.NoError(t, c.KillZooKeeperServer(leader))
	newLeader, err := c.ZooKeeperLeader(ctx)
	require.NoError(t, err)
	require.NotEqual(t, leader, newLeader, "the two others elect a new leader")
	t.Logf("after the kill of leader %d, server %d leads", leader, newLeader)
	stillThere("the leader's kill")
	require.NoError(t, c.RestartZooKeeperServer(ctx, leader))
	mode, err = c.ZooKeeperServerMode(ctx, leader)
	require.NoError(t, err)
	require.Equal(t, "follower", mode, "the old leader rejoins as a follower")
	require.NoError(t, c.WaitZooKeeperQuorum(ctx))
	stillThere("the leader's restart")

	// Loss of quorum: two of three killed.
	survivor := leader
	gone := followers(c, survivor)
	for _, i := range gone {
		require.NoError(t, c.KillZooKeeperServer(i))
	}
	waitMode(t, ctx, c, survivor, "", time.Minute)
	_, _, err = client.Exists(path)
	require.Error(t, err, "no server serves without a quorum")
	require.NoError(t, c.RestartZooKeeperServer(ctx, gone[0]), "one more server restores the quorum")
	_, err = c.ZooKeeperLeader(ctx)
	require.NoError(t, err)
	require.NoError(t, c.RestartZooKeeperServer(ctx, gone[1]))
	require.NoError(t, c.WaitZooKeeperQuorum(ctx))
	stillThere("a loss of quorum shorter than the session timeout")

	// The single-server controls act on every server of an ensemble.
	require.NoError(t, c.PauseZooKeeper())
	for i := range servers {
		qctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		mode, err := c.ZooKeeperServerMode(qctx, i)
		cancel()
		// What answered, if anything did: the process's state says
		// whether the stop took (T) and the port whether another
		// process holds it now (a restart on a port freed meanwhile).
		require.Error(t, err, "paused server %d answers nothing; it answered mode %q, process %d in state %q, port %d",
			i, mode, c.zk[i].pid, procState(c.zk[i].pid), c.zk[i].port)
	}
	require.NoError(t, c.ResumeZooKeeper())
	require.NoError(t, c.WaitZooKeeperQuorum(ctx))
	require.NoError(t, c.KillZooKeeper())
	for i := range servers {
		require.False(t, c.ZooKeeperServerRunning(i), "server %d killed", i)
	}
	require.NoError(t, c.RestartZooKeeper(ctx))
	for i := range servers {
		require.True(t, c.ZooKeeperServerRunning(i), "server %d restarted", i)
	}
	_, err = c.ZooKeeperLeader(ctx)
	require.NoError(t, err)
	stillThere("the kill and restart of the whole ensemble")
	require.Error(t, c.RestartZooKeeper(ctx), "nothing to restart")
}

// testEnsembleIsolateAndPause cuts a follower, then the leader, off from
// the other servers while their client ports stay reachable, and pauses
// the leader. An isolated follower stops serving once it gives up on the
// leader (after about ZooKeeperSyncLimit ticks) while the two others keep
// their leader; an isolated or paused leader is replaced by the two others;
// healed or resumed, each rejoins as a follower.
func testEnsembleIsolateAndPause(t *testing.T, c *Cluster) {
	ctx := testwait.Context(t, 10*time.Minute)
	require.NoError(t, c.WaitZooKeeperQuorum(ctx))
	syncTimeout := time.Duration(ZooKeeperSyncLimit) * ZooKeeperTickTime

	leader, err := c.ZooKeeperLeader(ctx)
	require.NoError(t, err)
	client := connectZK(t, ctx, c.ZKServers(), 10*time.Second)
	session := client.SessionID()

	// An isolated follower.
	f := followers(c, leader)[0]
	require.NoError(t, c.IsolateZooKeeperServer(f))
	took := waitMode(t, ctx, c, f, "", 2*time.Minute)
	t.Logf("isolated follower %d stopped serving after %v (syncLimit x tickTime = %v)", f, took.Round(100*time.Millisecond), syncTimeout)
	require.GreaterOrEqual(t, took, syncTimeout/2, "a follower gives up on the leader by its timeout, not at once")
	still, err := c.ZooKeeperLeader(ctx)
	require.NoError(t, err)
	require.Equal(t, leader, still, "the two others keep their leader")
	require.NoError(t, c.WaitZooKeeperQuorum(ctx), "the quorum does not wait for an isolated server")
	_, err = client.Create("/"+UniqueName("during-isolation"), nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err, "the ensemble serves writes without the isolated follower")
	require.NoError(t, c.HealZooKeeperServer(f))
	waitMode(t, ctx, c, f, "follower", 2*time.Minute)
	require.NoError(t, c.WaitZooKeeperQuorum(ctx))

	// An isolated leader.
	require.NoError(t, c.IsolateZooKeeperServer(leader))
	var newLeader int
	testwait.WaitFor(t, 2*time.Minute, func() bool {
		newLeader, err = c.ZooKeeperLeader(ctx)
		return err == nil && newLeader != leader
	}, "the two others elect a new leader")
	waitMode(t, ctx, c, leader, "", 2*time.Minute)
	t.Logf("isolated leader %d stepped down; server %d leads", leader, newLeader)
	require.NoError(t, c.HealZooKeeperServer(leader))
	waitMode(t, ctx, c, leader, "follower", 2*time.Minute)
	require.NoError(t, c.WaitZooKeeperQuorum(ctx))

	// A paused leader.
	leader = newLeader
	require.NoError(t, c.PauseZooKeeperServer(leader))
	testwait.WaitFor(t, 2*time.Minute, func() bool {
		newLeader, err = c.ZooKeeperLeader(ctx)
		return err == nil && newLeader != leader
	}, "the two others replace the paused leader")
	require.NoError(t, c.WaitZooKeeperQuorum(ctx), "the quorum does not wait for a paused server")
	require.NoError(t, c.ResumeZooKeeperServer(leader))
	waitMode(t, ctx, c, leader, "follower", 2*time.Minute)
	require.NoError(t, c.WaitZooKeeperQuorum(ctx))

	// Whether the client's session lived through all this depends on its
	// own timing (a go-zookeeper client that connected to the paused
	// leader waits long for an answer); that it works again does not.
	testwait.WaitFor(t, time.Minute, func() bool {
		_, _, err := client.Exists("/")
		return err == nil
	}, "the client works again")
	t.Logf("client session 0x%x before, 0x%x after", session, client.SessionID())
}

// TestZooKeeperProxies cuts a client from the server it is connected to
// (it fails over to another, keeping its session), then from the whole
// ensemble for longer than its session timeout (the session expires). It is
// not parallel: its 4 s session must outlive the failover, which the load
// of the parallel tests (JVMs starting) could prevent.
func TestZooKeeperProxies(t *testing.T) {
	c := Shared(t)
	if c.ZooKeeperServers() < 2 {
		// A single server named by the environment: use an ensemble of
		// our own rather than skip the failover.
		c = Private(t, Options{ZooKeeperServers: 3})
	}
	ctx := testwait.Context(t, 5*time.Minute)
	set, err := c.NewZooKeeperProxies()
	require.NoError(t, err)
	defer func() { require.NoError(t, set.Close()) }()
	require.Equal(t, c.ZooKeeperServers(), set.Len())
	require.True(t, strings.HasSuffix(set.Connect(), c.Chroot()), set.Connect())
	require.Len(t, strings.Split(strings.TrimSuffix(set.Connect(), c.Chroot()), ","), c.ZooKeeperServers())

	const timeout = 4 * time.Second
	client := connectZK(t, ctx, set.Addrs(), timeout)
	session := client.SessionID()
	path := "/" + UniqueName("proxied-ephemeral")
	_, err = client.Create(path, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	// Cut from its server only: it moves to another.
	first := slices.Index(set.Addrs(), client.Server())
	require.GreaterOrEqual(t, first, 0, "the client is connected through a proxy (%s)", client.Server())
	require.NoError(t, set.SetModeFor(first, Blackhole))
	testwait.WaitFor(t, time.Minute, func() bool {
		_, _, err := client.Exists(path)
		return err == nil && client.Server() != set.Addrs()[first]
	}, "the client fails over to another server")
	require.Equal(t, session, client.SessionID(), "failing over keeps the session")
	require.NoError(t, set.SetModeFor(first, Forward))

	// Cut from every server for longer than the session timeout.
	observer, err := c.dialZK(ctx)
	require.NoError(t, err)
	defer observer.Close()
	exists, _, gone, err := observer.ExistsW(path)
	require.NoError(t, err)
	require.True(t, exists)
	set.SetMode(Blackhole)
	select {
	case ev := <-gone:
		require.Equal(t, zk.EventNodeDeleted, ev.Type, "the partitioned client's session expires")
	case <-ctx.Done():
		t.Fatal("the ephemeral node of the partitioned client outlived its session")
	}
	set.SetMode(Forward)
	waitState(t, ctx, client.states, zk.StateExpired)
}

// TestIsolationNeedsQuorumProxies: a cluster without proxies between its
// ZooKeeper servers says so.
func TestIsolationNeedsQuorumProxies(t *testing.T) {
	c := &Cluster{zk: []*node{{}}, zkPaused: []bool{false}, zkServers: []string{"127.0.0.1:1"}}
	require.ErrorIs(t, c.IsolateZooKeeperServer(0), ErrNoIsolation)
	require.ErrorIs(t, c.HealZooKeeperServer(0), ErrNoIsolation)
	require.ErrorContains(t, c.IsolateZooKeeperServer(1), "no ZooKeeper server 1")
	env := &Cluster{zkServers: []string{"127.0.0.1:1"}}
	require.ErrorIs(t, env.KillZooKeeperServer(0), ErrNotControlled)
	require.ErrorIs(t, (&Cluster{kraft: true}).KillZooKeeperServer(0), ErrNoZooKeeper)
}

func TestParseZKConnect(t *testing.T) {
	servers, chroot, err := ParseZKConnect("127.0.0.1:1,127.0.0.1:2, 127.0.0.1:3/kafka")
	require.NoError(t, err)
	require.Equal(t, []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}, servers)
	require.Equal(t, "/kafka", chroot)
	servers, chroot, err = ParseZKConnect("localhost:2181")
	require.NoError(t, err)
	require.Equal(t, []string{"localhost:2181"}, servers)
	require.Empty(t, chroot)
	_, _, err = ParseZKConnect("localhost/kafka")
	require.ErrorContains(t, err, `server "localhost" is not host:port`)
}

func TestParseSrvrMode(t *testing.T) {
	mode, err := parseSrvrMode("Zookeeper version: 3.8.4\nLatency min/avg/max: 0/0.0/0\nMode: follower\nNode count: 5\n")
	require.NoError(t, err)
	require.Equal(t, "follower", mode)
	_, err = parseSrvrMode("This ZooKeeper instance is not currently serving requests\n")
	require.ErrorIs(t, err, ErrZooKeeperNotServing)
	_, err = parseSrvrMode("")
	require.Error(t, err)
}

func TestRetriableStartFailure(t *testing.T) {
	for _, tc := range []struct{ log, want string }{
		{"[2026-01-01 00:00:00,000] ERROR Fatal error during KafkaServer startup. Prepare to shutdown (kafka.server.KafkaServer)\nkafka.zookeeper.ZooKeeperClientTimeoutException: Timed out waiting for connection while in state: CONNECTING\n\tat kafka.zookeeper.ZooKeeperClient.waitUntilConnected(ZooKeeperClient.scala:254)",
			"kafka.zookeeper.ZooKeeperClientTimeoutException: Timed out waiting for connection while in state: CONNECTING"},
		{"org.I0Itec.zkclient.exception.ZkTimeoutException: Unable to connect to zookeeper server '127.0.0.1:1' with timeout of 6000 ms",
			"org.I0Itec.zkclient.exception.ZkTimeoutException: Unable to connect to zookeeper server '127.0.0.1:1' with timeout of 6000 ms"},
		{"org.apache.zookeeper.KeeperException$ConnectionLossException: KeeperErrorCode = ConnectionLoss for /brokers/ids",
			"org.apache.zookeeper.KeeperException$ConnectionLossException: KeeperErrorCode = ConnectionLoss for /brokers/ids"},
		{"java.net.BindException: Address already in use", ""},
		{"kafka.common.InconsistentClusterIdException: The Cluster ID doesn't match stored clusterId", ""},
	} {
		require.Equal(t, tc.want, retriableStartFailure(tc.log))
	}
}

// TestLogSinceStart: a restarted process's start-up failure is read from
// what it wrote since its last start, not from an earlier run's log.
func TestLogSinceStart(t *testing.T) {
	path := t.TempDir() + "/log"
	earlier := "earlier run: ZooKeeperClientTimeoutException\n"
	require.NoError(t, os.WriteFile(path, []byte(earlier), 0o644))
	j := &jvm{name: "broker", logPath: path, logStart: int64(len(earlier))} // as start() records it
	require.Equal(t, "", retriableStartFailure(j.logSinceStart()))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("this run\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Equal(t, "this run\n", j.logSinceStart())
}

// procState is the State line of /proc/<pid>/status ("T (stopped)"), or
// the error reading it.
func procState(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "State:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "no State line"
}
