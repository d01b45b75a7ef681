package zksession

import (
	"encoding/binary"
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
}

const answerBound = 2 * time.Second

func newAnswerFirstDialer(t *testing.T) *answerFirstDialer {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	return &answerFirstDialer{done: done, conns: map[net.Conn]struct{}{}, healed: make(chan struct{})}
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
	lc := &answerFirstConn{Conn: c, answered: make(chan struct{}), done: d.done}
	d.mu.Lock()
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
	done <-chan struct{}

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
		if c.packets > 1 && len(head) >= 4 && int32(binary.BigEndian.Uint32(head)) >= 0 {
			c.once.Do(func() { close(c.answered) })
		}
	})
	return n, err
}

func (c *answerFirstConn) Write(p []byte) (int, error) {
	first := !c.wrote
	c.wrote = true
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
// the answers wait for SetWatches. The requests succeed and the watches
// still fire after all the reconnections.
func TestReconnectWithWatchesRaceFree(t *testing.T) {
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
	}

	// The gate held answers on every reconnection, briefly.
	holds, held := l.dialer.watches.holds.Load(), time.Duration(l.dialer.watches.heldNanos.Load())
	t.Logf("the gate held %d answers for %v in all", holds, held)
	require.GreaterOrEqual(t, holds, int64(rounds))
	require.Less(t, held/time.Duration(holds), 100*time.Millisecond)

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
