package zksession

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestParseConnectString(t *testing.T) {
	good := []struct {
		in     string
		hosts  []string
		chroot string
	}{
		{"127.0.0.1:2181", []string{"127.0.0.1:2181"}, ""},
		{"zk1:2181,zk2:2182/kafka", []string{"zk1:2181", "zk2:2182"}, "/kafka"},
		{"zk1,zk2:3000", []string{"zk1:2181", "zk2:3000"}, ""},
		{" zk1:2181 , zk2 /a/b", []string{"zk1:2181", "zk2:2181"}, "/a/b"},
		{"zk1:2181/", []string{"zk1:2181"}, ""},
		{"[::1]:2181,[fe80::1]/kafka", []string{"[::1]:2181", "[fe80::1]:2181"}, "/kafka"},
		{"zk1:02181", []string{"zk1:2181"}, ""},
	}
	for _, tc := range good {
		hosts, chroot, err := ParseConnectString(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.hosts, hosts, tc.in)
		require.Equal(t, tc.chroot, chroot, tc.in)
	}

	bad := []struct{ in, want string }{
		{"", "empty"},
		{"   ", "empty"},
		{"/kafka", "no hosts"},
		{"zk1:2181,,zk2:2181", "empty host"},
		{"zk1:2181,", "empty host"},
		{":2181", "empty host name"},
		{"zk1:", "empty port"},
		{"zk1:abc", `port "abc"`},
		{"zk1:0", `port "0"`},
		{"zk1:65536", `port "65536"`},
		{"::1:2181", "IPv6 address must be in brackets"},
		{"[::1:2181", "[ipv6]:port"},
		{"zk1:2181/kafka/", `ends with '/'`},
		{"zk1:2181/kafka//x", "empty segment"},
		{"zk1:2181/kafka/../x", "relative segment"},
		{"zk1:2181/ka\x01fka", "character U+0001"},
		{"zk 1:2181", "bad character"},
	}
	for _, tc := range bad {
		_, _, err := ParseConnectString(tc.in)
		require.Error(t, err, tc.in)
		require.ErrorIs(t, err, ErrBadConnectString, tc.in)
		require.Contains(t, err.Error(), tc.want, tc.in)
		require.True(t, strings.HasPrefix(err.Error(), "bad zookeeper.connect"), err.Error())
	}
}

func TestSessionConfigValidate(t *testing.T) {
	require.NoError(t, SessionConfig{Connect: "zk:2181"}.Validate())
	require.ErrorIs(t, SessionConfig{}.Validate(), ErrBadConnectString)
	require.ErrorContains(t, SessionConfig{Connect: "zk", SessionTimeout: -1}.Validate(), "zookeeper.session.timeout.ms")
	require.ErrorContains(t, SessionConfig{Connect: "zk", ConnectionTimeout: -1}.Validate(), "zookeeper.connection.timeout.ms")
	require.ErrorContains(t, SessionConfig{Connect: "zk", Auth: []Auth{{Secret: []byte("u:p")}}}.Validate(), "no scheme")

	d := SessionConfig{Connect: "zk", SessionTimeout: 3 * time.Second}.withDefaults()
	require.Equal(t, 3*time.Second, d.ConnectionTimeout, "the connection timeout defaults to the session timeout, as in Kafka")
	require.Equal(t, zk.WorldACL(zk.PermAll), d.ACL)
	require.NotNil(t, d.Logger)
	require.NotNil(t, d.Dialer)
	require.Equal(t, DefaultSessionTimeout, SessionConfig{Connect: "zk"}.withDefaults().SessionTimeout)
}

func TestSessionPaths(t *testing.T) {
	s := newSession(SessionConfig{}.withDefaults(), nil, "/kafka")
	for in, want := range map[string]string{"/": "/kafka", "/a": "/kafka/a", "/a/b.c": "/kafka/a/b.c"} {
		got, err := s.fullPath(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
		require.Equal(t, in, s.stripChroot(got))
	}
	require.Equal(t, "/other", s.stripChroot("/other"))
	require.Equal(t, "/kafkaX/other", s.stripChroot("/kafkaX/other"))
	for _, bad := range []string{"", "a", "/a/", "//a", "/a/./b", "/a/..", "/a\x00b", "/a\u007fb"} {
		_, err := s.fullPath(bad)
		require.ErrorIs(t, err, ErrInvalidPath, "%q", bad)
	}
	noChroot := newSession(SessionConfig{}.withDefaults(), nil, "")
	got, err := noChroot.fullPath("/")
	require.NoError(t, err)
	require.Equal(t, "/", got)
	require.Equal(t, "/kafka/a", noChroot.stripChroot("/kafka/a"))
	require.Equal(t, "/", parentPath("/a"))
	require.Equal(t, "/a", parentPath("/a/b"))
}

func TestOpErrorWrapsBothSentinels(t *testing.T) {
	s := newSession(SessionConfig{}.withDefaults(), nil, "")
	for _, tc := range []struct{ theirs, ours error }{
		{zk.ErrNoNode, ErrNoNode},
		{zk.ErrNodeExists, ErrNodeExists},
		{zk.ErrBadVersion, ErrBadVersion},
		{zk.ErrNotEmpty, ErrNotEmpty},
		{zk.ErrNoAuth, ErrNoAuth},
		{zk.ErrSessionExpired, ErrSessionExpired},
		{zk.ErrClosing, ErrClosed},
		{zk.ErrConnectionClosed, ErrConnectionLoss},
		{zk.ErrNoServer, ErrConnectionLoss},
		{&net.OpError{Op: "write", Net: "tcp", Err: errors.New("broken pipe")}, ErrConnectionLoss},
	} {
		err := s.opError("get", "/x", tc.theirs)
		require.ErrorIs(t, err, tc.ours, "%v", tc.theirs)
		require.ErrorIs(t, err, tc.theirs)
		var oe *OpError
		require.ErrorAs(t, err, &oe)
		require.Equal(t, "get", oe.Op)
		require.Equal(t, "/x", oe.Path)
		require.True(t, strings.HasPrefix(err.Error(), "get /x: "), err.Error())
		require.NotContains(t, err.Error(), ": zk: ")
	}
	require.Equal(t, "get /x: node does not exist", s.opError("get", "/x", zk.ErrNoNode).Error())
	err := s.opError("get", "/x", context.DeadlineExceeded)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, ErrConnectionLoss, "a context error is not a connection loss, though it is a net.Error")
}

// newTestSession returns a Session over a fake connection; tests drive
// go-zookeeper's event callback by hand.
func newTestSession(t *testing.T, conn zkConn) *Session {
	t.Helper()
	s := newSession(SessionConfig{}.withDefaults(), []string{"fake:2181"}, "/kafka")
	// Every link of the Session gets the same fake; the tests set the
	// session id it reports.
	s.connect = func(*link) (zkConn, <-chan zk.Event, error) { return conn, nil, nil }
	s.mu.Lock()
	_, err := s.startLinkLocked()
	s.mu.Unlock()
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// fire delivers ev to the event callback of s's current link, as
// go-zookeeper would.
func fire(s *Session, ev zk.Event) {
	s.mu.Lock()
	l := s.cur
	s.mu.Unlock()
	s.handleEvent(l, ev)
}

func sessionEvent(state zk.State) zk.Event {
	return zk.Event{Type: zk.EventSession, State: state, Server: "fake:2181"}
}

func TestSessionStateMachine(t *testing.T) {
	conn := newFakeConn(0x100)
	s := newTestSession(t, conn)
	events, cancel := s.Subscribe()
	defer cancel()

	// go-zookeeper's sequence: connecting, TCP connected, session.
	fire(s, sessionEvent(zk.StateConnecting))
	fire(s, sessionEvent(zk.StateConnected))
	fire(s, sessionEvent(zk.StateHasSession))
	require.Equal(t, StateConnected, s.State())
	require.Equal(t, int64(0x100), s.ID())
	require.True(t, s.DisconnectedSince().IsZero())
	ev := <-events
	require.Equal(t, StateConnected, ev.State)
	require.Equal(t, int64(0x100), ev.SessionID)
	require.False(t, ev.NewSession())

	// Node events are not session events.
	fire(s, zk.Event{Type: zk.EventNodeDataChanged, State: zk.StateSyncConnected, Path: "/kafka/x"})

	// A reconnection to the same session.
	fire(s, sessionEvent(zk.StateDisconnected))
	require.Equal(t, StateDisconnected, s.State())
	require.False(t, s.DisconnectedSince().IsZero())
	require.Equal(t, int64(0x100), s.ID(), "the session lives on while disconnected")
	fire(s, sessionEvent(zk.StateConnecting))
	fire(s, sessionEvent(zk.StateDisconnected)) // a failed attempt: no second event
	fire(s, sessionEvent(zk.StateConnected))
	fire(s, sessionEvent(zk.StateHasSession))
	require.Equal(t, SessionEvent{State: StateDisconnected, SessionID: 0x100}, withoutTime(<-events))
	require.Equal(t, SessionEvent{State: StateConnected, SessionID: 0x100}, withoutTime(<-events))
	require.True(t, s.DisconnectedSince().IsZero())

	// An expiry: disconnected, expired on reconnection, a new session.
	fire(s, sessionEvent(zk.StateDisconnected))
	fire(s, sessionEvent(zk.StateConnecting))
	fire(s, sessionEvent(zk.StateConnected))
	conn.session.Store(0)
	fire(s, sessionEvent(zk.StateExpired))
	require.Equal(t, StateExpired, s.State())
	require.Equal(t, int64(0), s.ID())
	require.False(t, s.DisconnectedSince().IsZero())
	fire(s, sessionEvent(zk.StateDisconnected))
	fire(s, sessionEvent(zk.StateConnecting))
	fire(s, sessionEvent(zk.StateConnected))
	conn.session.Store(0x200)
	fire(s, sessionEvent(zk.StateHasSession))
	require.Equal(t, SessionEvent{State: StateDisconnected, SessionID: 0x100}, withoutTime(<-events))
	require.Equal(t, SessionEvent{State: StateExpired, SessionID: 0x100}, withoutTime(<-events))
	ev = <-events
	require.Equal(t, SessionEvent{State: StateConnected, SessionID: 0x200, ExpiredSessionID: 0x100}, withoutTime(ev))
	require.True(t, ev.NewSession())
	require.Equal(t, "connected 0x200 (replaces expired 0x100)", ev.String())
	require.Equal(t, int64(0x200), s.ID())

	// A connection that reports another session is dropped as if its
	// session expired; the next connection announces the new session.
	conn.session.Store(0x300)
	fire(s, sessionEvent(zk.StateDisconnected))
	fire(s, sessionEvent(zk.StateHasSession))
	require.Equal(t, StateDisconnected, (<-events).State)
	require.Equal(t, SessionEvent{State: StateExpired, SessionID: 0x200}, withoutTime(<-events))
	fire(s, sessionEvent(zk.StateHasSession))
	require.Equal(t, SessionEvent{State: StateConnected, SessionID: 0x300, ExpiredSessionID: 0x200}, withoutTime(<-events))
	require.Equal(t, SessionStats{State: StateConnected, Disconnects: 3, Expirations: 2}, s.Stats(),
		"every StateDisconnected and StateExpired event is counted")

	require.NoError(t, s.Close())
	require.Equal(t, SessionEvent{State: StateClosed, SessionID: 0x300}, withoutTime(<-events))
	_, ok := <-events
	require.False(t, ok, "the channel is closed after StateClosed")
	require.Equal(t, StateClosed, s.State())
	require.Equal(t, int64(0), s.ID())
	require.False(t, s.DisconnectedSince().IsZero())
	select {
	case <-s.Done():
	default:
		t.Fatal("Done is not closed after Close")
	}

	// Events after Close are ignored; a late subscriber sees StateClosed.
	fire(s, sessionEvent(zk.StateDisconnected))
	late, lateCancel := s.Subscribe()
	defer lateCancel()
	require.Equal(t, StateClosed, (<-late).State)
	_, ok = <-late
	require.False(t, ok)
	require.NoError(t, s.Close(), "Close is idempotent")
}

func withoutTime(ev SessionEvent) SessionEvent {
	ev.At = time.Time{}
	return ev
}

// TestSlowSubscriberLosesNothing fires many events through the callback
// while a subscriber does not read: the callback never blocks and the
// subscriber later gets every event, in order, expiries included.
func TestSlowSubscriberLosesNothing(t *testing.T) {
	conn := newFakeConn(1)
	s := newTestSession(t, conn)
	fire(s, sessionEvent(zk.StateHasSession))
	slow, cancelSlow := s.Subscribe()
	defer cancelSlow()
	fast, cancelFast := s.Subscribe()
	var fastGot []SessionEvent
	fastDone := make(chan struct{})
	go func() {
		defer close(fastDone)
		for ev := range fast {
			fastGot = append(fastGot, ev)
		}
	}()

	var want []SessionEvent
	fired := make(chan struct{})
	go func() {
		defer close(fired)
		for i := int64(1); i <= 500; i++ {
			fire(s, sessionEvent(zk.StateDisconnected))
			want = append(want, SessionEvent{State: StateDisconnected, SessionID: i})
			if i%3 == 0 {
				conn.session.Store(0)
				fire(s, sessionEvent(zk.StateExpired))
				want = append(want, SessionEvent{State: StateExpired, SessionID: i})
				conn.session.Store(i + 1)
				fire(s, sessionEvent(zk.StateHasSession))
				want = append(want, SessionEvent{State: StateConnected, SessionID: i + 1, ExpiredSessionID: i})
			} else {
				// A reconnection to session i, then a connection that
				// reports session i+1 without an expiry event: it is
				// dropped, and the next one announces session i+1.
				fire(s, sessionEvent(zk.StateHasSession))
				conn.session.Store(i + 1)
				fire(s, sessionEvent(zk.StateDisconnected))
				fire(s, sessionEvent(zk.StateHasSession))
				fire(s, sessionEvent(zk.StateHasSession))
				want = append(want,
					SessionEvent{State: StateConnected, SessionID: i},
					SessionEvent{State: StateDisconnected, SessionID: i},
					SessionEvent{State: StateExpired, SessionID: i},
					SessionEvent{State: StateConnected, SessionID: i + 1, ExpiredSessionID: i})
			}
		}
	}()
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("the event callback blocked on a subscriber that does not read")
	}

	got := make([]SessionEvent, 0, len(want))
	for len(got) < len(want) {
		select {
		case ev := <-slow:
			got = append(got, withoutTime(ev))
		case <-time.After(10 * time.Second):
			t.Fatalf("got %d of %d events", len(got), len(want))
		}
	}
	require.Equal(t, want, got)
	expiries := 0
	for _, ev := range got {
		if ev.State == StateExpired {
			expiries++
		}
	}
	require.Equal(t, 500, expiries)

	cancelFast()
	<-fastDone
	require.LessOrEqual(t, len(fastGot), len(want))
	for i, ev := range fastGot {
		require.Equal(t, want[i], withoutTime(ev), "a cancelled subscriber gets a prefix")
	}

	// Close delivers StateClosed after the queued events.
	fire(s, sessionEvent(zk.StateDisconnected))
	require.NoError(t, s.Close())
	require.Equal(t, StateDisconnected, (<-slow).State)
	require.Equal(t, StateClosed, (<-slow).State)
	_, ok := <-slow
	require.False(t, ok)
}

// TestCloseAbandonsSubscriberThatDoesNotRead: Close waits a bounded time
// for a subscriber that never reads and leaves no goroutine behind.
func TestCloseAbandonsSubscriberThatDoesNotRead(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := newTestSession(t, newFakeConn(1))
	fire(s, sessionEvent(zk.StateHasSession))
	_, cancel := s.Subscribe()
	defer cancel()
	for range subscriberBuffer {
		fire(s, sessionEvent(zk.StateDisconnected))
		fire(s, sessionEvent(zk.StateHasSession))
	}
	start := time.Now()
	require.NoError(t, s.Close())
	require.GreaterOrEqual(t, time.Since(start), closeDeliveryTimeout, "Close waits for a subscriber that is behind")
	require.Less(t, time.Since(start), closeDeliveryTimeout+2*time.Second)
}

// TestDialUnreachable: nothing listens on 127.0.0.1:1; Dial gives up after
// ConnectionTimeout with ErrConnectionTimeout, naming the host, and leaves
// no goroutine of go-zookeeper or its own behind.
func TestDialUnreachable(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const timeout = 1500 * time.Millisecond
	start := time.Now()
	s, err := Dial(context.Background(), SessionConfig{Connect: "127.0.0.1:1/kafka", ConnectionTimeout: timeout})
	elapsed := time.Since(start)
	require.Nil(t, s)
	require.ErrorIs(t, err, ErrConnectionTimeout)
	require.Contains(t, err.Error(), "127.0.0.1:1")
	require.Contains(t, err.Error(), "last dial error")
	require.True(t, strings.HasPrefix(err.Error(), "timed out connecting to ZooKeeper: "), err.Error())
	require.GreaterOrEqual(t, elapsed, timeout)
	require.Less(t, elapsed, timeout+3*time.Second, "Dial must not hang")
	t.Logf("Dial error after %v: %v", elapsed.Round(time.Millisecond), err)
}

func TestDialContextEnds(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Dial(ctx, SessionConfig{Connect: "127.0.0.1:1", ConnectionTimeout: time.Minute})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, ErrConnectionTimeout)
	require.Less(t, time.Since(start), 3*time.Second)

	_, err = Dial(context.Background(), SessionConfig{Connect: "127.0.0.1:1/bad/"})
	require.ErrorIs(t, err, ErrBadConnectString)
}

// TestCreateAfterConnectionLoss: the fake applies a create, then fails it
// with ErrConnectionClosed and reconnects to the same session, as
// go-zookeeper does when the connection drops before the answer arrives.
// The retried create finds the node and recognises it as its own.
func TestCreateAfterConnectionLoss(t *testing.T) {
	conn := newFakeConn(0x42)
	s := newTestSession(t, conn)
	fire(s, sessionEvent(zk.StateHasSession))
	ctx := context.Background()
	reconnect := func() {
		fire(s, sessionEvent(zk.StateDisconnected))
		fire(s, sessionEvent(zk.StateHasSession))
	}

	conn.loseAnswer("create", "/kafka/consumers/g/ids/c1", reconnect)
	require.NoError(t, s.CreateEphemeral(ctx, "/consumers/g/ids/c1", []byte("reg")))
	n := conn.node("/kafka/consumers/g/ids/c1")
	require.Equal(t, int64(0x42), n.owner)
	require.Equal(t, "reg", string(n.data))
	require.Nil(t, conn.node("/kafka/consumers/g/ids").data, "parents hold null, as with ZkClient")
	require.Zero(t, conn.node("/kafka/consumers").owner, "parents are persistent")

	// The same call again: the node is ours with our data.
	require.NoError(t, s.CreateEphemeral(ctx, "/consumers/g/ids/c1", []byte("reg")))
	// Other data, or another session's node: a conflict.
	err := s.CreateEphemeral(ctx, "/consumers/g/ids/c1", []byte("other"))
	require.ErrorIs(t, err, ErrNodeExists)
	require.ErrorIs(t, err, zk.ErrNodeExists)
	conn.put("/kafka/owners/t/0", []byte("c1-0"), 0x99)
	require.ErrorIs(t, s.CreateEphemeral(ctx, "/owners/t/0", []byte("c1-0")), ErrNodeExists)

	// Persistent: equal data counts as ours only after a connection loss.
	conn.loseAnswer("create", "/kafka/p", reconnect)
	require.NoError(t, s.CreatePersistent(ctx, "/p", []byte("x")))
	require.ErrorIs(t, s.CreatePersistent(ctx, "/p", []byte("x")), ErrNodeExists)

	// Delete: a retry that finds no node succeeds.
	conn.loseAnswer("delete", "/kafka/p", reconnect)
	require.NoError(t, s.Delete(ctx, "/p", -1))
	require.ErrorIs(t, s.Delete(ctx, "/p", -1), ErrNoNode)

	// Conditional set: a retry that finds version+1 with our data succeeds.
	conn.put("/kafka/v", []byte("a"), 0)
	conn.loseAnswer("set", "/kafka/v", reconnect)
	st, err := s.Set(ctx, "/v", []byte("b"), 0)
	require.NoError(t, err)
	require.Equal(t, int32(1), st.Version)
	_, err = s.Set(ctx, "/v", []byte("c"), 0)
	require.ErrorIs(t, err, ErrBadVersion)

	// SetOrCreate creates with parents, then sets.
	require.NoError(t, s.SetOrCreate(ctx, "/consumers/g/offsets/t/0", []byte("5")))
	require.NoError(t, s.SetOrCreate(ctx, "/consumers/g/offsets/t/0", []byte("6")))
	data, st, err := s.Get(ctx, "/consumers/g/offsets/t/0")
	require.NoError(t, err)
	require.Equal(t, "6", string(data))
	require.Equal(t, int32(1), st.Version)

	require.NoError(t, s.EnsurePath(ctx, "/brokers/ids"))
	require.NoError(t, s.EnsurePath(ctx, "/brokers/ids"))
	children, err := s.Children(ctx, "/")
	require.NoError(t, err)
	sort.Strings(children)
	require.Equal(t, []string{"brokers", "consumers", "v"}, children)
}

// TestMultiIsNotRetried: a transaction whose answer is lost after it was
// applied fails with ErrOutcomeUnknown and is not sent again (a retry of
// deletes would meet a peer's node created meanwhile at one of the paths);
// a transaction with a failing operation applies nothing and names the
// operation's path.
func TestMultiIsNotRetried(t *testing.T) {
	conn := newFakeConn(0x42)
	s := newTestSession(t, conn)
	fire(s, sessionEvent(zk.StateHasSession))
	ctx := context.Background()
	conn.put("/kafka/owners", nil, 0)
	conn.put("/kafka/owners/0", []byte("me"), 0x42)
	conn.put("/kafka/owners/1", []byte("me"), 0x42)
	conn.loseAnswer("multi", "/kafka/owners/0", func() {
		fire(s, sessionEvent(zk.StateDisconnected))
		conn.put("/kafka/owners/0", []byte("peer"), 0x99)
		conn.put("/kafka/owners/1", []byte("peer"), 0x99)
		fire(s, sessionEvent(zk.StateHasSession))
	})
	err := s.Multi(ctx, DeleteOp("/owners/0", 0), DeleteOp("/owners/1", 0))
	require.ErrorIs(t, err, ErrOutcomeUnknown)
	require.Equal(t, "peer", string(conn.node("/kafka/owners/0").data), "the transaction was sent again")
	require.Equal(t, "peer", string(conn.node("/kafka/owners/1").data), "the transaction was sent again")

	err = s.Multi(ctx, CreateEphemeralOp("/owners/2", []byte("me")), CreateEphemeralOp("/owners/1", []byte("me")))
	require.ErrorIs(t, err, ErrNodeExists)
	var op *OpError
	require.ErrorAs(t, err, &op)
	require.Equal(t, "/owners/1", op.Path)
	require.Nil(t, conn.node("/kafka/owners/2").data, "a failed transaction applied an operation")
	require.NoError(t, s.Multi(ctx, CreateEphemeralOp("/owners/2", []byte("me")), DeleteOp("/owners/1", 0)))
	require.Equal(t, int64(0x42), conn.node("/kafka/owners/2").owner)
	require.Nil(t, conn.node("/kafka/owners/1").data)
}

// TestDeleteEphemeralAfterConnectionLoss: the fake applies the delete of
// our ephemeral node, then fails it with a lost connection; before the
// retry, a peer creates its own node at the path (version 0, as ours had).
// The retry must leave the peer's node alone; Delete's retry deletes it.
// When the node is still ours at the retry, the retry deletes it.
func TestDeleteEphemeralAfterConnectionLoss(t *testing.T) {
	conn := newFakeConn(0x42)
	s := newTestSession(t, conn)
	fire(s, sessionEvent(zk.StateHasSession))
	ctx := context.Background()
	const path, full = "/owners/t/0", "/kafka/owners/t/0"
	reconnectThen := func(owner int64, data string) func() {
		return func() {
			fire(s, sessionEvent(zk.StateDisconnected))
			conn.put(full, []byte(data), owner)
			fire(s, sessionEvent(zk.StateHasSession))
		}
	}

	conn.put(full, []byte("me-0"), 0x42)
	conn.loseAnswer("delete", full, reconnectThen(0x99, "peer-0"))
	require.NoError(t, s.DeleteEphemeral(ctx, path, 0), "the node it meant is gone")
	peer := conn.node(full)
	require.Equal(t, int64(0x99), peer.owner, "the retry deleted a peer's node")
	require.Equal(t, "peer-0", string(peer.data))

	// Still ours at the retry (the first attempt's delete did not count):
	// deleted.
	conn.put(full, []byte("me-0"), 0x42)
	conn.loseAnswer("delete", full, reconnectThen(0x42, "me-0"))
	require.NoError(t, s.DeleteEphemeral(ctx, path, 0))
	require.Nil(t, conn.node(full).data, "our node is still there")

	// Without a connection loss it is a conditional delete.
	conn.put(full, []byte("me-0"), 0x42)
	require.ErrorIs(t, s.DeleteEphemeral(ctx, path, 3), ErrBadVersion)
	require.NoError(t, s.DeleteEphemeral(ctx, path, 0))
	require.ErrorIs(t, s.DeleteEphemeral(ctx, path, 0), ErrNoNode)
}

// TestOperationsHonourContext: a request go-zookeeper does not answer is
// abandoned when the context ends, and a request that lost its connection
// waits for the next session only until the context ends.
func TestOperationsHonourContext(t *testing.T) {
	conn := newFakeConn(1)
	s := newTestSession(t, conn)
	fire(s, sessionEvent(zk.StateHasSession))

	conn.blockGets()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := s.Get(ctx, "/x")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 2*time.Second)

	// Lost connection, no reconnection: the retry gives up with the
	// context, reporting both.
	conn.loseAnswer("create", "/kafka/y", func() { fire(s, sessionEvent(zk.StateDisconnected)) })
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	err = s.CreatePersistent(ctx2, "/y", nil)
	require.ErrorIs(t, err, ErrConnectionLoss)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "create /y: connection to ZooKeeper lost")

	// Close ends the abandoned Get (the fake fails it as go-zookeeper
	// does); later operations fail with ErrClosed.
	require.NoError(t, s.Close())
	_, _, err = s.Get(context.Background(), "/x")
	require.ErrorIs(t, err, ErrClosed)
	_, _, err = s.Get(ctx, "/x")
	require.ErrorIs(t, err, ErrClosed)
}

// fakeConn is an in-memory ZooKeeper for unit tests of the operations.
type fakeConn struct {
	session atomic.Int64

	mu      sync.Mutex
	nodes   map[string]*fakeNode
	lose    map[string]func() // "op path": apply, run the hook, fail with ErrConnectionClosed
	blocked chan struct{}     // when set, Get blocks until Close
	closed  chan struct{}
	once    sync.Once
}

type fakeNode struct {
	data    []byte
	owner   int64
	version int32
}

func newFakeConn(session int64) *fakeConn {
	c := &fakeConn{nodes: map[string]*fakeNode{"/": {}}, lose: map[string]func(){}, closed: make(chan struct{})}
	c.session.Store(session)
	return c
}

func (c *fakeConn) loseAnswer(op, path string, hook func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lose[op+" "+path] = hook
}

func (c *fakeConn) blockGets() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blocked = make(chan struct{})
}

func (c *fakeConn) node(path string) fakeNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.nodes[path]; n != nil {
		return *n
	}
	return fakeNode{}
}

func (c *fakeConn) put(path string, data []byte, owner int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nodes[path] = &fakeNode{data: data, owner: owner}
}

// lost runs after an applied change; it reports whether to fail it.
func (c *fakeConn) lost(op, path string) error {
	c.mu.Lock()
	hook := c.lose[op+" "+path]
	delete(c.lose, op+" "+path)
	c.mu.Unlock()
	if hook == nil {
		return nil
	}
	hook()
	return zk.ErrConnectionClosed
}

func (c *fakeConn) stat(n *fakeNode) *zk.Stat {
	return &zk.Stat{Version: n.version, EphemeralOwner: n.owner, DataLength: int32(len(n.data))}
}

func (c *fakeConn) AddAuth(string, []byte) error { return nil }

func (c *fakeConn) Children(path string) ([]string, *zk.Stat, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[path]
	if n == nil {
		return nil, nil, zk.ErrNoNode
	}
	var children []string
	for p := range c.nodes {
		if p != "/" && parentPath(p) == path {
			children = append(children, p[strings.LastIndexByte(p, '/')+1:])
		}
	}
	return children, c.stat(n), nil
}

func (c *fakeConn) ChildrenW(string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	return nil, nil, nil, errors.New("fake: no watches")
}

func (c *fakeConn) Close() { c.once.Do(func() { close(c.closed) }) }

func (c *fakeConn) Create(path string, data []byte, flags int32, _ []zk.ACL) (string, error) {
	c.mu.Lock()
	if c.nodes[path] != nil {
		c.mu.Unlock()
		return "", zk.ErrNodeExists
	}
	if c.nodes[parentPath(path)] == nil {
		c.mu.Unlock()
		return "", zk.ErrNoNode
	}
	n := &fakeNode{data: data}
	if flags == zk.FlagEphemeral {
		n.owner = c.session.Load()
	}
	c.nodes[path] = n
	c.mu.Unlock()
	return path, c.lost("create", path)
}

func (c *fakeConn) Delete(path string, version int32) error {
	c.mu.Lock()
	n := c.nodes[path]
	switch {
	case n == nil:
		c.mu.Unlock()
		return zk.ErrNoNode
	case version >= 0 && n.version != version:
		c.mu.Unlock()
		return zk.ErrBadVersion
	}
	delete(c.nodes, path)
	c.mu.Unlock()
	return c.lost("delete", path)
}

// Multi applies creates and deletes all or none; an answer lost on the
// first path's "multi" hook fails it after it was applied.
func (c *fakeConn) Multi(ops ...any) ([]zk.MultiResponse, error) {
	c.mu.Lock()
	res := make([]zk.MultiResponse, len(ops))
	next := maps.Clone(c.nodes)
	var first string
	for i, op := range ops {
		var err error
		switch op := op.(type) {
		case *zk.CreateRequest:
			switch {
			case next[op.Path] != nil:
				err = zk.ErrNodeExists
			case next[parentPath(op.Path)] == nil:
				err = zk.ErrNoNode
			default:
				n := &fakeNode{data: op.Data}
				if op.Flags == zk.FlagEphemeral {
					n.owner = c.session.Load()
				}
				next[op.Path] = n
			}
			first = cmp.Or(first, op.Path)
		case *zk.DeleteRequest:
			switch n := next[op.Path]; {
			case n == nil:
				err = zk.ErrNoNode
			case op.Version >= 0 && n.version != op.Version:
				err = zk.ErrBadVersion
			default:
				delete(next, op.Path)
			}
			first = cmp.Or(first, op.Path)
		}
		if err != nil {
			res[i].Error = err
			c.mu.Unlock()
			return res, err
		}
	}
	c.nodes = next
	c.mu.Unlock()
	return res, c.lost("multi", first)
}

func (c *fakeConn) Exists(path string) (bool, *zk.Stat, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.nodes[path]; n != nil {
		return true, c.stat(n), nil
	}
	return false, &zk.Stat{}, nil
}

func (c *fakeConn) ExistsW(string) (bool, *zk.Stat, <-chan zk.Event, error) {
	return false, nil, nil, errors.New("fake: no watches")
}

func (c *fakeConn) Get(path string) ([]byte, *zk.Stat, error) {
	c.mu.Lock()
	blocked := c.blocked
	c.mu.Unlock()
	if blocked != nil {
		<-c.closed
		return nil, nil, zk.ErrConnectionClosed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.nodes[path]; n != nil {
		return n.data, c.stat(n), nil
	}
	return nil, nil, zk.ErrNoNode
}

func (c *fakeConn) GetW(string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	return nil, nil, nil, errors.New("fake: no watches")
}

func (c *fakeConn) Set(path string, data []byte, version int32) (*zk.Stat, error) {
	c.mu.Lock()
	n := c.nodes[path]
	switch {
	case n == nil:
		c.mu.Unlock()
		return nil, zk.ErrNoNode
	case version >= 0 && n.version != version:
		c.mu.Unlock()
		return nil, zk.ErrBadVersion
	}
	n.data, n.version = data, n.version+1
	st := c.stat(n)
	c.mu.Unlock()
	return st, c.lost("set", path)
}

func (c *fakeConn) SessionID() int64 { return c.session.Load() }

func (c *fakeConn) Sync(path string) (string, error) { return path, nil }

var _ zkConn = (*fakeConn)(nil)

func ExampleSessionEvent_NewSession() {
	ev := SessionEvent{State: StateConnected, SessionID: 0x2a, ExpiredSessionID: 0x29}
	if ev.NewSession() {
		fmt.Println("re-register ephemeral nodes and re-arm watches:", ev)
	}
	// Output:
	// re-register ephemeral nodes and re-arm watches: connected 0x2a (replaces expired 0x29)
}

func TestOpenACLPaths(t *testing.T) {
	secured := append(zk.AuthACL(zk.PermAll), zk.WorldACL(zk.PermRead)...)
	s := newSession(SessionConfig{ACL: secured, OpenACLPaths: []string{"/consumers"}}, nil, "/kafka")
	if got := s.aclFor("/kafka/consumers"); len(got) != 1 || got[0].Perms != zk.PermAll || got[0].Scheme != "world" {
		t.Errorf("/consumers: %+v", got)
	}
	for _, p := range []string{"/kafka/consumers/g", "/kafka/consumers/g/ids", "/consumers"} {
		if got := s.aclFor(p); len(got) != 2 {
			t.Errorf("%s: %+v", p, got)
		}
	}
}
