package zksession

import (
	"bytes"
	"context"
	"log"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// Integration tests of Session against the real ZooKeeper of the shared
// test cluster (testcluster.Shared), whose brokers live under "/kafka".

// dialSession dials cfg and closes the Session when the test ends.
func dialSession(t *testing.T, ctx context.Context, cfg SessionConfig) *Session {
	t.Helper()
	s, err := Dial(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// observer opens a plain go-zookeeper connection without chroot or
// credentials, to look at what a Session did.
// caughtUp makes raw's server catch up with the leader (ZooKeeper's sync)
// and returns raw, so that a read through it sees what a session on
// another server of the ensemble has written: a follower may lag, and the
// tests run side by side.
func caughtUp(t *testing.T, raw *zk.Conn) *zk.Conn {
	t.Helper()
	_, err := raw.Sync("/")
	require.NoError(t, err)
	return raw
}

func observer(t *testing.T, ctx context.Context, servers []string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect(servers, 10*time.Second, zk.WithLogger(discardZKLogger{}))
	require.NoError(t, err)
	var once sync.Once
	closeConn := func() {
		once.Do(func() {
			conn.Close()
			for range events { // go-zookeeper closes it when its loop ends
			}
		})
	}
	t.Cleanup(closeConn)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return conn
			}
		case <-ctx.Done():
			t.Fatalf("observer: no session with %v", servers)
		}
	}
}

type discardZKLogger struct{}

func (discardZKLogger) Printf(string, ...any) {}

// nextEvent returns the next session event, failing the test after d.
func nextEvent(t *testing.T, events <-chan SessionEvent, d time.Duration) SessionEvent {
	t.Helper()
	select {
	case ev, ok := <-events:
		require.True(t, ok, "the event channel closed")
		t.Logf("session event: %v", ev)
		return ev
	case <-time.After(d):
		t.Fatalf("no session event within %v", d)
	}
	return SessionEvent{}
}

// nextWatch returns the event of a watch, failing the test after d.
func nextWatch(t *testing.T, ch <-chan WatchEvent, d time.Duration) WatchEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		require.True(t, ok, "the watch channel closed without an event")
		_, more := <-ch
		require.False(t, more, "a watch fires once and is closed")
		return ev
	case <-time.After(d):
		t.Fatalf("the watch did not fire within %v", d)
	}
	return WatchEvent{}
}

func requireNoWatch(t *testing.T, ch <-chan WatchEvent) {
	t.Helper()
	select {
	case ev := <-ch:
		t.Fatalf("unexpected watch event %+v", ev)
	default:
	}
}

// TestSessionChrootAndCreates checks that every path is under the chroot,
// and the create, set and delete operations with their errors.
func TestSessionChrootAndCreates(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	s := dialSession(t, ctx, SessionConfig{Connect: c.ZKConnect()})
	raw := observer(t, ctx, c.ZKServers())
	require.Equal(t, c.Chroot(), s.Chroot())
	require.Equal(t, "/kafka", s.Chroot())
	require.NotZero(t, s.ID())
	require.Equal(t, StateConnected, s.State())
	require.True(t, s.DisconnectedSince().IsZero())

	base := "/" + testcluster.UniqueName("zksession-session")
	// The brokers registered under the chroot are visible at "/brokers".
	ids, err := s.Children(ctx, "/brokers/ids")
	require.NoError(t, err)
	require.NotEmpty(t, ids)

	// Persistent node with parents; the parents hold null.
	require.NoError(t, s.CreatePersistent(ctx, base+"/a/b", []byte("x")))
	data, st, err := caughtUp(t, raw).Get("/kafka" + base + "/a/b")
	require.NoError(t, err)
	require.Equal(t, "x", string(data))
	require.Zero(t, st.EphemeralOwner)
	data, _, err = caughtUp(t, raw).Get("/kafka" + base + "/a")
	require.NoError(t, err)
	require.Empty(t, data)
	ok, _, err := caughtUp(t, raw).Exists(base)
	require.NoError(t, err)
	require.False(t, ok, "nothing is created outside the chroot")

	err = s.CreatePersistent(ctx, base+"/a/b", []byte("x"))
	require.ErrorIs(t, err, ErrNodeExists)
	require.ErrorIs(t, err, zk.ErrNodeExists)
	require.EqualError(t, err, "create "+base+"/a/b: node already exists")

	// Ephemeral node with parents, owned by the session.
	eph := base + "/ids/member-1"
	require.NoError(t, s.CreateEphemeral(ctx, eph, []byte("reg")))
	_, st, err = caughtUp(t, raw).Get("/kafka" + eph)
	require.NoError(t, err)
	require.Equal(t, s.ID(), st.EphemeralOwner)
	ok, sst, err := s.Exists(ctx, eph)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, s.ID(), sst.EphemeralOwner)
	require.Equal(t, int32(3), sst.DataLength)
	require.WithinDuration(t, time.Now(), sst.Ctime, time.Minute)
	// Again with the same data: ours. With other data, or from another
	// session: a conflict.
	require.NoError(t, s.CreateEphemeral(ctx, eph, []byte("reg")))
	require.ErrorIs(t, s.CreateEphemeral(ctx, eph, []byte("other")), ErrNodeExists)
	other := dialSession(t, ctx, SessionConfig{Connect: c.ZKConnect()})
	require.NotEqual(t, s.ID(), other.ID())
	require.ErrorIs(t, other.CreateEphemeral(ctx, eph, []byte("reg")), ErrNodeExists)
	err = s.CreateEphemeral(ctx, eph+"/child", nil)
	require.Error(t, err, "ephemeral nodes have no children")
	require.ErrorIs(t, err, zk.ErrNoChildrenForEphemerals)

	// EnsurePath, SetOrCreate, Set, Get.
	require.NoError(t, s.EnsurePath(ctx, base+"/offsets/t"))
	require.NoError(t, s.EnsurePath(ctx, base+"/offsets/t"))
	require.NoError(t, s.EnsurePath(ctx, "/"))
	off := base + "/offsets/t/0"
	require.NoError(t, s.SetOrCreate(ctx, off, []byte("10")))
	require.NoError(t, s.SetOrCreate(ctx, off, []byte("11")))
	data, st2, err := s.Get(ctx, off)
	require.NoError(t, err)
	require.Equal(t, "11", string(data))
	require.Equal(t, int32(1), st2.Version)
	require.NoError(t, s.SetOrCreate(ctx, base+"/deep/er/node", []byte("y")))
	st2, err = s.Set(ctx, off, []byte("12"), 1)
	require.NoError(t, err)
	require.Equal(t, int32(2), st2.Version)
	_, err = s.Set(ctx, off, []byte("13"), 1)
	require.ErrorIs(t, err, ErrBadVersion)
	_, err = s.Set(ctx, base+"/missing", nil, -1)
	require.ErrorIs(t, err, ErrNoNode)

	children, err := s.Children(ctx, base)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"a", "ids", "offsets", "deep"}, children)
	_, err = s.Children(ctx, base+"/missing")
	require.ErrorIs(t, err, ErrNoNode)
	_, _, err = s.Get(ctx, base+"/missing")
	require.ErrorIs(t, err, ErrNoNode)
	require.ErrorIs(t, err, zk.ErrNoNode)
	require.EqualError(t, err, "get "+base+"/missing: node does not exist")
	ok, st3, err := s.Exists(ctx, base+"/missing")
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, Stat{}, st3)
	_, _, err = s.Get(ctx, "relative")
	require.ErrorIs(t, err, ErrInvalidPath)

	// Delete.
	require.ErrorIs(t, s.Delete(ctx, off, 0), ErrBadVersion)
	require.ErrorIs(t, s.Delete(ctx, base+"/offsets/t", -1), ErrNotEmpty)
	require.NoError(t, s.Delete(ctx, off, 2))
	require.ErrorIs(t, s.Delete(ctx, off, -1), ErrNoNode)

	// Close deletes the session's ephemeral nodes at once. (The observer
	// may be connected to another server of the ensemble: it syncs first,
	// or it can read a state older than the close; Close no longer waits
	// for the heartbeat's tick, which used to hide that.)
	require.NoError(t, s.Close())
	_, err = raw.Sync("/kafka" + eph)
	require.NoError(t, err)
	ok, _, err = caughtUp(t, raw).Exists("/kafka" + eph)
	require.NoError(t, err)
	require.False(t, ok, "the ephemeral node is gone as soon as the session is closed")
	_, _, err = s.Get(ctx, off)
	require.ErrorIs(t, err, ErrClosed)
	require.EqualError(t, err, "get "+off+": session closed")
}

// TestSessionWatches checks that data, children and exists watches fire
// once with paths relative to the chroot, and are lost on Close.
func TestSessionWatches(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	s := dialSession(t, ctx, SessionConfig{Connect: c.ZKConnect()})
	raw := observer(t, ctx, c.ZKServers())
	base := "/" + testcluster.UniqueName("zksession-watch")
	node := base + "/node"
	require.NoError(t, s.CreatePersistent(ctx, node, []byte("v1")))

	data, _, dataW, err := s.GetW(ctx, node)
	require.NoError(t, err)
	require.Equal(t, "v1", string(data))
	children, childW, err := s.ChildrenW(ctx, base)
	require.NoError(t, err)
	require.Equal(t, []string{"node"}, children)
	ok, _, createdW, err := s.ExistsW(ctx, base+"/later")
	require.NoError(t, err)
	require.False(t, ok)
	ok, _, deletedW, err := s.ExistsW(ctx, node)
	require.NoError(t, err)
	require.True(t, ok)
	requireNoWatch(t, dataW)

	_, err = raw.Set("/kafka"+node, []byte("v2"), -1)
	require.NoError(t, err)
	require.Equal(t, WatchEvent{Type: NodeDataChanged, Path: node}, nextWatch(t, dataW, 10*time.Second))
	// ExistsW on an existing node watches its data too.
	require.Equal(t, WatchEvent{Type: NodeDataChanged, Path: node}, nextWatch(t, deletedW, 10*time.Second))

	_, err = raw.Create("/kafka"+base+"/later", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	require.Equal(t, WatchEvent{Type: NodeCreated, Path: base + "/later"}, nextWatch(t, createdW, 10*time.Second))
	require.Equal(t, WatchEvent{Type: NodeChildrenChanged, Path: base}, nextWatch(t, childW, 10*time.Second))

	_, _, deletedW, err = s.ExistsW(ctx, node)
	require.NoError(t, err)
	require.NoError(t, raw.Delete("/kafka"+node, -1))
	require.Equal(t, WatchEvent{Type: NodeDeleted, Path: node}, nextWatch(t, deletedW, 10*time.Second))

	_, _, _, err = s.GetW(ctx, node)
	require.ErrorIs(t, err, ErrNoNode, "GetW on a missing node sets no watch")

	// A watch on the chroot itself reports "/".
	rootS := dialSession(t, ctx, SessionConfig{Connect: c.ZKServer() + "/kafka" + base})
	_, rootW, err := rootS.ChildrenW(ctx, "/")
	require.NoError(t, err)
	_, err = raw.Create("/kafka"+base+"/another", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	require.Equal(t, WatchEvent{Type: NodeChildrenChanged, Path: "/"}, nextWatch(t, rootW, 10*time.Second))

	// Pending watches are lost on Close.
	_, _, lostW, err := s.GetW(ctx, base+"/later")
	require.NoError(t, err)
	require.NoError(t, s.Close())
	ev := nextWatch(t, lostW, 10*time.Second)
	require.Equal(t, WatchLost, ev.Type)
	require.Equal(t, base+"/later", ev.Path)
	require.ErrorIs(t, ev.Err, ErrClosed)
}

// TestSessionExpiry expires the session with a SessionTap: subscribers
// see the expiry and then the new session, the ephemeral node is gone and
// pending watches are lost.
func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	tap := &testcluster.SessionTap{}
	// Once armed, the dialer holds the client's connections: it lets one
	// through once the session is gone (ZooKeeper reports the expiry on
	// it) and holds the next (for a new session) until released, so that
	// the test sees the Session between the two: with several servers to
	// try, go-zookeeper has its new session within milliseconds.
	var armed atomic.Bool
	token := make(chan struct{}, 1)
	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseDials := func() { releaseOnce.Do(func() { close(release) }) }
	defer releaseDials()
	dial := func(network, address string, timeout time.Duration) (net.Conn, error) {
		if armed.Load() {
			select {
			case <-token:
			case <-release:
			case <-time.After(time.Minute):
			}
		}
		return tap.Dial(network, address, timeout)
	}
	s := dialSession(t, ctx, SessionConfig{Connect: c.ZKConnect(), Dialer: dial, SessionTimeout: 4 * time.Second})
	events, cancel := s.Subscribe()
	defer cancel()
	raw := observer(t, ctx, c.ZKServers())
	base := "/" + testcluster.UniqueName("zksession-expiry")
	eph := base + "/ids/member"
	require.NoError(t, s.CreateEphemeral(ctx, eph, []byte("reg")))
	require.NoError(t, s.CreatePersistent(ctx, base+"/data", []byte("d")))
	_, _, pending, err := s.GetW(ctx, base+"/data")
	require.NoError(t, err)
	old := s.ID()
	require.Equal(t, old, tap.SessionID())

	armed.Store(true)
	require.NoError(t, tap.Expire())
	token <- struct{}{}
	ok, _, err := caughtUp(t, raw).Exists("/kafka" + eph)
	require.NoError(t, err)
	require.False(t, ok, "ZooKeeper deleted the ephemeral node of the expired session")

	var seen []SessionState
	var ev SessionEvent
	for {
		ev = nextEvent(t, events, 30*time.Second)
		seen = append(seen, ev.State)
		if ev.State == StateExpired {
			require.Equal(t, old, ev.SessionID)
			require.False(t, s.DisconnectedSince().IsZero(), "no session: DisconnectedSince is set")
			releaseDials()
		}
		if ev.State == StateConnected {
			break
		}
		require.Equal(t, old, ev.SessionID)
	}
	require.Contains(t, seen, StateExpired, "events: %v", seen)
	require.True(t, ev.NewSession())
	require.Equal(t, old, ev.ExpiredSessionID)
	require.NotEqual(t, old, ev.SessionID)
	require.Equal(t, ev.SessionID, s.ID())
	require.True(t, s.DisconnectedSince().IsZero())

	lost := nextWatch(t, pending, 10*time.Second)
	require.Equal(t, WatchLost, lost.Type)
	require.Equal(t, base+"/data", lost.Path)
	require.ErrorIs(t, lost.Err, ErrSessionExpired)
	require.ErrorIs(t, lost.Err, zk.ErrSessionExpired)

	// Re-register on the new session, as the consumer does.
	ok, _, err = s.Exists(ctx, eph)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, s.CreateEphemeral(ctx, eph, []byte("reg")))
	_, st, err := caughtUp(t, raw).Get("/kafka" + eph)
	require.NoError(t, err)
	require.Equal(t, s.ID(), st.EphemeralOwner)
}

// TestSessionDisconnectKeepsSession stalls the connection through a proxy
// for less than the session timeout: subscribers see Disconnected, then
// Connected with the same session, the ephemeral node survives, and an
// operation issued while disconnected completes after the reconnection.
func TestSessionDisconnectKeepsSession(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	proxy, err := c.NewZooKeeperProxies()
	require.NoError(t, err)
	defer proxy.Close()
	// recvTimeout = 2/3 of it: the client notices the stall after at most
	// 8s; the server keeps the session 12s after the last ping.
	s := dialSession(t, ctx, SessionConfig{Connect: proxy.Connect(), SessionTimeout: 12 * time.Second})
	events, cancel := s.Subscribe()
	defer cancel()
	base := "/" + testcluster.UniqueName("zksession-disconnect")
	eph := base + "/ids/member"
	require.NoError(t, s.CreateEphemeral(ctx, eph, []byte("reg")))
	id := s.ID()

	proxy.SetMode(testcluster.Blackhole)
	// A request into the stall returns when its context ends.
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	start := time.Now()
	_, _, err = s.Get(short, eph)
	cancelShort()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 2*time.Second)

	ev := nextEvent(t, events, 20*time.Second)
	require.Equal(t, SessionEvent{State: StateDisconnected, SessionID: id}, withoutTime(ev))
	require.Equal(t, StateDisconnected, s.State())
	since := s.DisconnectedSince()
	require.False(t, since.IsZero())
	require.Equal(t, ev.At, since)
	require.Equal(t, id, s.ID())

	// An operation issued while disconnected waits for the connection.
	type result struct {
		data []byte
		err  error
	}
	pending := make(chan result, 1)
	go func() {
		data, _, err := s.Get(ctx, eph)
		pending <- result{data, err}
	}()

	proxy.SetMode(testcluster.Forward)
	ev = nextEvent(t, events, 20*time.Second)
	require.Equal(t, SessionEvent{State: StateConnected, SessionID: id}, withoutTime(ev))
	require.False(t, ev.NewSession())
	require.True(t, s.DisconnectedSince().IsZero())
	require.Equal(t, id, s.ID())
	select {
	case r := <-pending:
		require.NoError(t, r.err)
		require.Equal(t, "reg", string(r.data))
	case <-time.After(20 * time.Second):
		t.Fatal("the operation issued while disconnected did not complete")
	}
	_, st, err := s.Get(ctx, eph)
	require.NoError(t, err)
	require.Equal(t, id, st.EphemeralOwner, "the ephemeral node survived the disconnection")
}

// TestSessionCloseDoesNotWaitForTheHeartbeat: Close ends the heartbeat at
// once. It waited for the heartbeat's next tick, an eighth of the session
// timeout (5 s here; 750 ms with Kafka's 6 s default, which every
// Shutdown and every tool run paid).
func TestSessionCloseDoesNotWaitForTheHeartbeat(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	s, err := Dial(ctx, SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 40 * time.Second})
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, s.Close())
	require.Less(t, time.Since(start), 3*time.Second, "Close waited for the heartbeat's tick")
}

// TestSessionCloseWhileStalled: Close returns promptly even when the
// network swallows everything, and fails the operations waiting on it.
func TestSessionCloseWhileStalled(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	proxy, err := c.NewZooKeeperProxies()
	require.NoError(t, err)
	defer proxy.Close()
	s := dialSession(t, ctx, SessionConfig{Connect: proxy.Connect(), SessionTimeout: 30 * time.Second})
	events, cancel := s.Subscribe()
	defer cancel()
	proxy.SetMode(testcluster.Blackhole)
	defer proxy.SetMode(testcluster.Forward)

	pending := make(chan error, 1)
	go func() {
		_, _, err := s.Get(context.Background(), "/brokers/ids")
		pending <- err
	}()
	start := time.Now()
	require.NoError(t, s.Close())
	require.Less(t, time.Since(start), 5*time.Second, "Close must not wait for the stalled connection")
	select {
	case err := <-pending:
		require.ErrorIs(t, err, ErrClosed)
	case <-time.After(10 * time.Second):
		t.Fatal("the pending operation did not end with Close")
	}
	require.Equal(t, StateClosed, nextEvent(t, events, 5*time.Second).State)
	_, open := <-events
	require.False(t, open)
	<-s.Done()
}

// TestSessionDigestAuth creates a node readable only with digest
// credentials, and checks that go-zookeeper re-sends the credentials after
// a reconnection.
func TestSessionDigestAuth(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	proxy, err := c.NewZooKeeperProxies()
	require.NoError(t, err)
	defer proxy.Close()
	user, password := testcluster.UniqueName("user"), "secret"
	s := dialSession(t, ctx, SessionConfig{
		Connect: proxy.Connect(),
		Auth:    []Auth{{Scheme: "digest", Secret: []byte(user + ":" + password)}},
		ACL:     zk.DigestACL(zk.PermAll, user, password),
	})
	events, cancel := s.Subscribe()
	defer cancel()
	path := "/" + testcluster.UniqueName("zksession-acl") + "/secret"
	require.NoError(t, s.CreatePersistent(ctx, path, []byte("s3cr3t")))

	raw := observer(t, ctx, c.ZKServers())
	_, _, err = caughtUp(t, raw).Get("/kafka" + path)
	require.ErrorIs(t, err, zk.ErrNoAuth, "an unauthenticated connection cannot read the node")
	_, _, err = caughtUp(t, raw).Children("/kafka" + path[:strings.LastIndexByte(path, '/')])
	require.ErrorIs(t, err, zk.ErrNoAuth, "the parents created along got the same ACL")

	anon := dialSession(t, ctx, SessionConfig{Connect: c.ZKConnect()})
	_, _, err = anon.Get(ctx, path)
	require.ErrorIs(t, err, ErrNoAuth)
	require.ErrorIs(t, err, zk.ErrNoAuth)

	// Reset the connection: same session, new connection, which
	// go-zookeeper authenticates again before any request.
	id := s.ID()
	proxy.ResetAll()
	require.Equal(t, StateDisconnected, nextEvent(t, events, 20*time.Second).State)
	ev := nextEvent(t, events, 20*time.Second)
	require.Equal(t, SessionEvent{State: StateConnected, SessionID: id}, withoutTime(ev))
	data, _, err := s.Get(ctx, path)
	require.NoError(t, err, "the credentials were re-sent after the reconnection")
	require.Equal(t, "s3cr3t", string(data))
	require.NoError(t, s.Delete(ctx, path, -1))
}

// TestSessionLogging: go-zookeeper's log lines go to the Session's logger
// at Debug level, never to the standard library's global logger.
func TestSessionLogging(t *testing.T) {
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	var global bytes.Buffer
	prev := log.Writer()
	log.SetOutput(&global)
	defer log.SetOutput(prev)
	var mu sync.Mutex
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := dialSession(t, ctx, SessionConfig{Connect: c.ZKConnect(), Logger: logger})
	require.NoError(t, s.Close())
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	require.Contains(t, out, "level=DEBUG msg=\"go-zookeeper: connected to ")
	require.Contains(t, out, "level=INFO msg=\"ZooKeeper session established\"")
	require.Empty(t, global.String(), "nothing goes to the global logger")
	require.False(t, strings.Contains(out, "secret"))
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}
