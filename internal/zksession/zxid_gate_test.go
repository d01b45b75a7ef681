package zksession

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// scriptConn is a net.Conn whose server side is a script: reads return the
// packets fed to it, in order (blocking when there are none), writes are
// recorded.
type scriptConn struct {
	net.Conn // nil: only the methods below are used

	mu      sync.Mutex
	in      bytes.Buffer
	more    chan struct{}
	written [][]byte
	closed  bool
}

func newScriptConn() *scriptConn { return &scriptConn{more: make(chan struct{}, 1)} }

func (c *scriptConn) feed(pkts ...[]byte) {
	c.mu.Lock()
	for _, p := range pkts {
		c.in.Write(p)
	}
	c.mu.Unlock()
	select {
	case c.more <- struct{}{}:
	default:
	}
}

func (c *scriptConn) Read(p []byte) (int, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return 0, net.ErrClosed
		}
		if c.in.Len() > 0 {
			defer c.mu.Unlock()
			return c.in.Read(p)
		}
		c.mu.Unlock()
		<-c.more
	}
}

func (c *scriptConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.written = append(c.written, bytes.Clone(p))
	return len(p), nil
}

func (c *scriptConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.feed()
	return nil
}

func (c *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(time.Time) error { return nil }

func jstring(s string) []byte { return append(i32(int32(len(s))), s...) }

// watchRequestPacket is a getData, exists or getChildren2 request as
// go-zookeeper writes it.
func watchRequestPacket(xid, op int32, path string, watch bool) []byte {
	flag := []byte{0}
	if watch {
		flag[0] = 1
	}
	return packet(i32(xid), i32(op), jstring(path), flag)
}

func answer(xid int32, zxid int64, code int32) []byte {
	return packet(i32(xid), i64(zxid), i32(code), []byte("body"))
}

func watchEventPacket(typ int32, path string) []byte {
	return packet(i32(xidWatchEvent), i64(-1), i32(0), i32(typ), i32(3), jstring(path))
}

func setWatchesPacket(xid int32) []byte {
	return packet(i32(xid), i32(wireOpSetWatches), i64(42), i32(0), i32(0), i32(0))
}

// readPacket reads one whole packet from c as go-zookeeper does: length,
// then body.
func readPacket(c net.Conn) ([]byte, error) {
	head := make([]byte, 4)
	if _, err := io.ReadFull(c, head); err != nil {
		return nil, err
	}
	body := make([]byte, int(binary.BigEndian.Uint32(head)))
	if _, err := io.ReadFull(c, body); err != nil {
		return nil, err
	}
	return append(head, body...), nil
}

// gatedSession opens a gated connection on table and establishes session
// 7 on it.
func gatedSession(t *testing.T, table *watchTable) (*gatedConn, *scriptConn) {
	t.Helper()
	sc := newScriptConn()
	g := newGatedConn(sc, table)
	_, err := g.Write(connectRequest(7))
	require.NoError(t, err)
	sc.feed(connectResponse(7, 6000))
	p, err := readPacket(g)
	require.NoError(t, err)
	require.Equal(t, connectResponse(7, 6000), p)
	return g, sc
}

// setWatch replays on g a watch request with its answer.
func setWatch(t *testing.T, g *gatedConn, sc *scriptConn, xid, op int32, path string, code int32) {
	t.Helper()
	_, err := g.Write(watchRequestPacket(xid, op, path, true))
	require.NoError(t, err)
	sc.feed(answer(xid, 100, code))
	_, err = readPacket(g)
	require.NoError(t, err)
}

// requireHeld checks that the next packet of g is not handed out before
// the read deadline.
func requireHeld(t *testing.T, g *gatedConn) {
	t.Helper()
	require.NoError(t, g.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
	_, err := readPacket(g)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
}

func TestGateWithoutWatchesHoldsNothing(t *testing.T) {
	var table watchTable
	g, sc := gatedSession(t, &table)
	_, err := g.Write(watchRequestPacket(1, wireOpGetData, "/a", false)) // no watch flag
	require.NoError(t, err)
	sc.feed(answer(1, 100, 0))
	_, err = readPacket(g)
	require.NoError(t, err)
	require.False(t, table.expectSetWatches())

	// A new connection of the same session: nothing to set again.
	g2, sc2 := gatedSession(t, &table)
	sc2.feed(answer(2, 101, 0))
	p, err := readPacket(g2)
	require.NoError(t, err)
	require.Equal(t, answer(2, 101, 0), p)
}

func TestGateHoldsZxidAnswersUntilSetWatches(t *testing.T) {
	var table watchTable
	g, sc := gatedSession(t, &table)
	setWatch(t, g, sc, 1, wireOpGetData, "/a", 0)
	require.True(t, table.expectSetWatches())
	require.NoError(t, g.Close())

	g2, sc2 := gatedSession(t, &table)
	// What go-zookeeper's receive loop may read before SetWatches: a
	// watch event, a ping answer, an answer without zxid, the answer to
	// credentials sent again.
	_, err := g2.Write(packet(i32(5), i32(wireOpSetAuth), i32(0), jstring("digest"), jstring("u:p")))
	require.NoError(t, err)
	for _, p := range [][]byte{watchEventPacket(eventNodeCreated, "/other"), answer(xidPing, 0, 0),
		answer(3, 0, 0), answer(5, 100, 0)} {
		sc2.feed(p)
		got, err := readPacket(g2)
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
	// An answer with a zxid waits for SetWatches...
	sc2.feed(answer(4, 105, 0))
	requireHeld(t, g2)
	// (the held packet was consumed by the failed read: the receive loop
	// drops such a connection; a fresh one shows the release)
	g3, sc3 := gatedSession(t, &table)
	sc3.feed(answer(6, 106, 0))
	got := make(chan []byte, 1)
	go func() {
		p, _ := readPacket(g3)
		got <- p
	}()
	_, err = g3.Write(setWatchesPacket(7))
	require.NoError(t, err)
	select {
	case p := <-got:
		require.Equal(t, answer(6, 106, 0), p)
	case <-time.After(10 * time.Second):
		t.Fatal("SetWatches did not release the answer")
	}
	// ...and nothing is held after it.
	sc3.feed(answer(8, 107, 0))
	p, err := readPacket(g3)
	require.NoError(t, err)
	require.Equal(t, answer(8, 107, 0), p)
}

func TestGateCloseWakesHeldRead(t *testing.T) {
	var table watchTable
	table.add(watchKey{"/a", watchChild})
	g, sc := gatedSession(t, &table)
	sc.feed(answer(1, 100, 0))
	errs := make(chan error, 1)
	go func() {
		_, err := readPacket(g)
		errs <- err
	}()
	require.NoError(t, g.Close())
	select {
	case err := <-errs:
		require.ErrorIs(t, err, net.ErrClosed)
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not wake the held read")
	}
}

// TestGateReplaysWatchTable follows go-zookeeper's table: which answers
// add a watch, which events remove which watches, expiry clears it.
func TestGateReplaysWatchTable(t *testing.T) {
	var table watchTable
	g, sc := gatedSession(t, &table)
	setWatch(t, g, sc, 1, wireOpGetData, "/d", -101) // GetW on a missing node: no watch
	setWatch(t, g, sc, 2, wireOpGetChildren2, "/c", 0)
	setWatch(t, g, sc, 3, wireOpExists, "/e", -101) // ExistsW on a missing node: an exist watch
	setWatch(t, g, sc, 4, wireOpExists, "/d", 0)    // ExistsW on a node: a data watch
	require.Equal(t, map[watchKey]struct{}{{"/c", watchChild}: {}, {"/e", watchExist}: {}, {"/d", watchData}: {}}, table.set)

	for _, ev := range []struct {
		typ  int32
		path string
		left int
	}{
		{eventNodeChildrenChanged, "/d", 3}, // no child watch on /d
		{eventNodeDataChanged, "/d", 2},
		{eventNodeCreated, "/e", 1},
		{eventNodeDeleted, "/c", 0},
	} {
		sc.feed(watchEventPacket(ev.typ, ev.path))
		_, err := readPacket(g)
		require.NoError(t, err)
		require.Len(t, table.set, ev.left, "after event %d on %s", ev.typ, ev.path)
	}

	setWatch(t, g, sc, 5, wireOpGetData, "/d", 0)
	require.True(t, table.expectSetWatches())
	// The session expired: go-zookeeper drops its watches.
	sc2 := newScriptConn()
	g2 := newGatedConn(sc2, &table)
	_, err := g2.Write(connectRequest(7))
	require.NoError(t, err)
	sc2.feed(connectResponse(0, 0))
	_, err = readPacket(g2)
	require.NoError(t, err)
	require.False(t, table.expectSetWatches())
}

// TestGateStopsHoldingWhenItCannotFollowWrites: a request not written in
// one piece would hide SetWatches from the gate, so it never holds again.
func TestGateStopsHoldingWhenItCannotFollowWrites(t *testing.T) {
	var table watchTable
	table.add(watchKey{"/a", watchData})
	g, sc := gatedSession(t, &table)
	req := watchRequestPacket(1, wireOpGetData, "/b", false)
	_, err := g.Write(req[:6])
	require.NoError(t, err)
	sc.feed(answer(1, 100, 0))
	_, err = readPacket(g)
	require.NoError(t, err)
	require.False(t, table.expectSetWatches())
}
