package zksession

import (
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// answerFirstDialer dials ZooKeeper directly. cut closes its live
// connections and makes new dials wait for heal. Each connection writes
// its second request only once it has read an answer to the first (or
// after answerBound), so that with requests queued ahead of go-zookeeper's
// SetWatches, an answer reaches the receive loop before the send loop has
// taken SetWatches: go-zookeeper v1.0.4's receive loop then writes the
// last zxid seen with nothing ordering it after sendSetWatches' read,
// which -race reports. (Holding SetWatches itself would not do: the send
// loop takes the session's wire tracker lock before it writes, and the
// receive loop takes it on every read, which orders the two.)
type answerFirstDialer struct {
	done <-chan struct{}

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	cutOff bool
	healed chan struct{}

	// What the server and go-zookeeper exchanged, as the wire carried it
	// (guarded by mu): answers to requests with a zxid above zero, the
	// highest such zxid, SetWatches requests, and those whose relative
	// zxid was not the highest zxid of the connections before theirs.
	zxidAnswers int
	maxZxid     int64
	setWatches  int
	badRelZxid  []string

	sentSetWatches chan struct{} // a value for every SetWatches written
}

const answerBound = 2 * time.Second

func newAnswerFirstDialer(t *testing.T) *answerFirstDialer {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	return &answerFirstDialer{done: done, conns: map[net.Conn]struct{}{}, healed: make(chan struct{}),
		sentSetWatches: make(chan struct{}, 100)}
}

func (d *answerFirstDialer) Dial(network, address string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	cut, healed := d.cutOff, d.healed
	d.mu.Unlock()
	if cut {
		select {
		case <-healed:
		case <-d.done:
			return nil, net.ErrClosed
		}
	}
	c, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	lc := &answerFirstConn{Conn: c, d: d, answered: make(chan struct{}), done: d.done}
	d.mu.Lock()
	lc.before = d.maxZxid
	d.conns[lc] = struct{}{}
	d.mu.Unlock()
	return lc, nil
}

// cut closes the live connections; dials wait until heal.
func (d *answerFirstDialer) cut() {
	d.mu.Lock()
	if !d.cutOff {
		d.cutOff, d.healed = true, make(chan struct{})
	}
	conns := d.conns
	d.conns = map[net.Conn]struct{}{}
	d.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
}

func (d *answerFirstDialer) heal() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cutOff {
		d.cutOff = false
		close(d.healed)
	}
}

type answerFirstConn struct {
	net.Conn
	d      *answerFirstDialer
	done   <-chan struct{}
	before int64 // the highest zxid answered on earlier connections

	in       frameScanner // read side, one reader
	packets  int
	answered chan struct{} // closed once an answer to a request was read
	once     sync.Once
	wrote    bool // write side, one writer
	requests int
}

func (c *answerFirstConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.in.feed(p[:n], time.Now(), func(head []byte, _ time.Time) {
		c.packets++
		if c.packets > 1 && len(head) >= 12 && int32(binary.BigEndian.Uint32(head)) >= 0 {
			c.once.Do(func() { close(c.answered) })
			if zxid := int64(binary.BigEndian.Uint64(head[4:12])); zxid > 0 {
				c.d.mu.Lock()
				c.d.zxidAnswers++
				c.d.maxZxid = max(c.d.maxZxid, zxid)
				c.d.mu.Unlock()
			}
		}
	})
	return n, err
}

func (c *answerFirstConn) Write(p []byte) (int, error) {
	first := !c.wrote
	c.wrote = true
	if !first && len(p) >= 20 && int32(binary.BigEndian.Uint32(p[8:12])) == wireOpSetWatches {
		rel := int64(binary.BigEndian.Uint64(p[12:20]))
		c.d.mu.Lock()
		c.d.setWatches++
		if rel != c.before {
			c.d.badRelZxid = append(c.d.badRelZxid, fmt.Sprintf("SetWatches from zxid %d, the last zxid seen was %d", rel, c.before))
		}
		c.d.mu.Unlock()
		select {
		case c.d.sentSetWatches <- struct{}{}:
		default:
		}
	}
	if !first && len(p) >= 12 && int32(binary.BigEndian.Uint32(p[4:8])) >= 0 {
		c.requests++
		if c.requests == 2 {
			select {
			case <-c.answered:
			case <-time.After(answerBound):
			case <-c.done:
			}
		}
	}
	return c.Conn.Write(p)
}

// TestReconnectWithWatchesRaceFree is go-zookeeper v1.0.4's data race on
// the last zxid seen (go-zookeeper/zk#35), forced: a session with watches
// loses its connection, requests queue while it is down, and on the
// reconnection their answers are read before SetWatches goes out. Without
// the gate (zxid_gate.go) -race reports the race in every run; with it,
// go-zookeeper's receive loop never writes the zxid, and SetWatches still
// carries the last zxid seen before the reconnection. The requests
// succeed and the watches still fire after all the reconnections.
func TestReconnectWithWatchesRaceFree(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	d := newAnswerFirstDialer(t)
	s := dialSession(t, ctx, SessionConfig{Connect: strings.Join(c.ZKServers(), ",") + c.Chroot(),
		SessionTimeout: 10 * time.Second, Dialer: d.Dial})
	obs := observer(t, ctx, c.ZKServers())
	l := s.linkOf(s.ID())
	require.NotNil(t, l)
	// The link's go-zookeeper connection, without chroot: the mechanism
	// itself, whatever the Session's operations do around it.
	conn := l.conn
	base := c.Chroot() + "/" + testcluster.UniqueName("zxidrace")
	_, err := conn.Create(base, []byte("0"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, _, dataWatch, err := conn.GetW(base)
	require.NoError(t, err)
	_, _, childWatch, err := conn.ChildrenW(base)
	require.NoError(t, err)
	_, _, existWatch, err := conn.ExistsW(base + "/later")
	require.NoError(t, err)

	events, unsubscribe := s.Subscribe()
	defer unsubscribe()
	const rounds, queued = 3, 4
	for range rounds {
		d.cut()
		for ev := nextEvent(t, events, 30*time.Second); ev.State != StateDisconnected; ev = nextEvent(t, events, 30*time.Second) {
		}
		results := make(chan error, queued)
		var started sync.WaitGroup
		started.Add(queued)
		for range queued {
			go func() {
				started.Done()
				_, _, err := conn.Get(base)
				results <- err
			}()
		}
		started.Wait() // each is a channel send away from go-zookeeper's queue
		d.heal()
		for ev := nextEvent(t, events, 30*time.Second); ev.State != StateConnected; ev = nextEvent(t, events, 30*time.Second) {
		}
		for range queued {
			select {
			case err := <-results:
				require.NoError(t, err)
			case <-ctx.Done():
				t.Fatal("a request queued across the reconnection never finished")
			}
		}
		// Nothing waits for SetWatches any more: it may go out after the
		// answers.
		select {
		case <-d.sentSetWatches:
		case <-ctx.Done():
			t.Fatal("no SetWatches after the reconnection")
		}
	}

	// go-zookeeper's receive loop got every zxid as 0, and SetWatches went
	// out on every reconnection from the last zxid seen before it.
	d.requireZxidKept(t, &l.dialer.zxid, rounds)

	// The watches were set again on every new connection.
	_, err = obs.Set(base, []byte("1"), -1)
	require.NoError(t, err)
	_, err = obs.Create(base+"/later", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	for name, ch := range map[string]<-chan zk.Event{"data": dataWatch, "child": childWatch, "exist": existWatch} {
		select {
		case ev := <-ch:
			require.NotEqual(t, zk.EventNotWatching, ev.Type, "the %s watch", name)
		case <-ctx.Done():
			t.Fatalf("the %s watch never fired", name)
		}
	}
}

// requireZxidKept checks that the gate kept from go-zookeeper every zxid
// the server answered with, and that at least setWatches SetWatches went
// out, each from the last zxid seen before its connection.
func (d *answerFirstDialer) requireZxidKept(t *testing.T, keeper *zxidKeeper, setWatches int) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	t.Logf("%d answers with a zxid, %d SetWatches", d.zxidAnswers, d.setWatches)
	require.Positive(t, d.zxidAnswers)
	require.Equal(t, int64(d.zxidAnswers), keeper.kept.Load(), "answers whose zxid reached go-zookeeper")
	require.GreaterOrEqual(t, d.setWatches, setWatches)
	require.Empty(t, d.badRelZxid)
}

// TestReconnectWithoutWatchesRaceFree is the reconnection of a session
// that had no watch when its connection dropped, with watch requests
// queued across it: on the new connection the first is answered (which
// puts a watch in go-zookeeper's table) and the others are read after it,
// while go-zookeeper's loop decides at the same time whether to send
// SetWatches (it does if it looks at its table after the first answer).
// Whichever it does, the receive loop never writes the zxid, and a
// SetWatches that goes out carries the last zxid seen before the
// reconnection. The watches set across each reconnection fire.
func TestReconnectWithoutWatchesRaceFree(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	d := newAnswerFirstDialer(t)
	s := dialSession(t, ctx, SessionConfig{Connect: strings.Join(c.ZKServers(), ",") + c.Chroot(),
		SessionTimeout: 10 * time.Second, Dialer: d.Dial})
	obs := observer(t, ctx, c.ZKServers())
	l := s.linkOf(s.ID())
	require.NotNil(t, l)
	conn := l.conn // without chroot, as in TestReconnectWithWatchesRaceFree
	base := c.Chroot() + "/" + testcluster.UniqueName("zxidnowatch")
	_, err := conn.Create(base, nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	events, unsubscribe := s.Subscribe()
	defer unsubscribe()
	const rounds, queued = 20, 4
	for round := range rounds {
		d.cut()
		for ev := nextEvent(t, events, 30*time.Second); ev.State != StateDisconnected; ev = nextEvent(t, events, 30*time.Second) {
		}
		type result struct {
			path  string
			watch <-chan zk.Event
			err   error
		}
		results := make(chan result, queued)
		var started sync.WaitGroup
		started.Add(queued)
		for i := range queued {
			path := fmt.Sprintf("%s/r%d-%d", base, round, i)
			go func() {
				started.Done()
				_, _, watch, err := conn.ExistsW(path)
				results <- result{path, watch, err}
			}()
		}
		started.Wait()
		d.heal()
		for ev := nextEvent(t, events, 30*time.Second); ev.State != StateConnected; ev = nextEvent(t, events, 30*time.Second) {
		}
		watches := map[string]<-chan zk.Event{}
		for range queued {
			select {
			case r := <-results:
				require.NoError(t, r.err)
				watches[r.path] = r.watch
			case <-ctx.Done():
				t.Fatal("a watch request queued across the reconnection never finished")
			}
		}
		// Fire every watch, so that the session has none at the next cut.
		for path, watch := range watches {
			_, err := obs.Create(path, nil, 0, zk.WorldACL(zk.PermAll))
			require.NoError(t, err)
			select {
			case ev := <-watch:
				require.Equal(t, zk.EventNodeCreated, ev.Type, path)
			case <-ctx.Done():
				t.Fatalf("the watch on %s never fired", path)
			}
		}
	}
	d.requireZxidKept(t, &l.dialer.zxid, 0)
}
