package zksession

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
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

func answer(xid int32, zxid int64, code int32) []byte {
	return packet(i32(xid), i64(zxid), i32(code), []byte("body"))
}

func watchEventPacket(typ int32, path string) []byte {
	return packet(i32(xidWatchEvent), i64(99), i32(0), i32(typ), i32(3), jstring(path))
}

func setWatchesPacket(xid int32, relZxid int64) []byte {
	return packet(i32(xid), i32(wireOpSetWatches), i64(relZxid), i32(0), i32(1), jstring("/a"), i32(0))
}

// connectRequestSeen is go-zookeeper's connect request for session with
// lastZxid as the last zxid seen.
func connectRequestSeen(session, lastZxid int64) []byte {
	return packet(i32(0), i64(lastZxid), i32(6000), i64(session), i32(16), make([]byte, 16))
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

// gatedSession opens a gated connection on keeper and establishes session
// 7 on it (0: the server says it expired).
func gatedSession(t *testing.T, keeper *zxidKeeper, granted int64) (*gatedConn, *scriptConn) {
	t.Helper()
	sc := newScriptConn()
	g := newGatedConn(sc, keeper)
	_, err := g.Write(connectRequest(7)) // go-zookeeper's own last zxid: 0, as the gate keeps it
	require.NoError(t, err)
	sc.feed(connectResponse(granted, 6000))
	p, err := readPacket(g)
	require.NoError(t, err)
	require.Equal(t, connectResponse(granted, 6000), p)
	return g, sc
}

// TestGateKeepsZxidFromGoZookeeper: every answer go-zookeeper reads has
// zxid 0, so its receive loop never writes its last zxid; everything else
// reaches it unchanged.
func TestGateKeepsZxidFromGoZookeeper(t *testing.T) {
	var keeper zxidKeeper
	g, sc := gatedSession(t, &keeper, 7)
	for _, c := range []struct{ in, out []byte }{
		{answer(1, 100, 0), answer(1, 0, 0)},
		{answer(2, 101, -101), answer(2, 0, -101)}, // an error answer too
		{answer(3, 0, 0), answer(3, 0, 0)},
		{watchEventPacket(1, "/a"), watchEventPacket(1, "/a")},
		{answer(xidPing, 102, 0), answer(xidPing, 102, 0)},
		{answer(-4, 103, 0), answer(-4, 103, 0)}, // credentials
	} {
		sc.feed(c.in)
		got, err := readPacket(g)
		require.NoError(t, err)
		require.Equal(t, c.out, got)
	}
	require.Equal(t, int64(101), keeper.last.Load(), "the last zxid go-zookeeper would have kept")
	require.Equal(t, int64(2), keeper.kept.Load())
}

// TestGateWritesTheZxidGoZookeeperWouldHave: the connect request carries
// the last zxid seen, SetWatches the last one seen before the connection's
// connect response (not those of answers read since), and an expired
// session starts again from zero.
func TestGateWritesTheZxidGoZookeeperWouldHave(t *testing.T) {
	var keeper zxidKeeper
	g, sc := gatedSession(t, &keeper, 7)
	sc.feed(answer(1, 100, 0))
	_, err := readPacket(g)
	require.NoError(t, err)
	require.Equal(t, connectRequestSeen(7, 0), sc.written[0])

	// A new connection of the same session.
	g2, sc2 := gatedSession(t, &keeper, 7)
	require.Equal(t, connectRequestSeen(7, 100), sc2.written[0])
	sc2.feed(answer(2, 105, 0)) // read before go-zookeeper builds SetWatches
	_, err = readPacket(g2)
	require.NoError(t, err)
	sw := setWatchesPacket(3, 0) // go-zookeeper's own zxid: 0
	_, err = g2.Write(sw)
	require.NoError(t, err)
	require.Equal(t, setWatchesPacket(3, 100), sc2.written[1])
	require.Equal(t, setWatchesPacket(3, 0), sw, "the caller's buffer is left as it was")
	other := watchRequestPacket(4, 4, "/a", true)
	_, err = g2.Write(other)
	require.NoError(t, err)
	require.Equal(t, other, sc2.written[2])
	require.Equal(t, int64(1), keeper.setWatches.Load())

	// The next connection resumes from 105; an expiry forgets it.
	g3, sc3 := gatedSession(t, &keeper, 0)
	require.Equal(t, connectRequestSeen(7, 105), sc3.written[0])
	require.Zero(t, keeper.last.Load())
	_, err = g3.Write(setWatchesPacket(1, 0))
	require.NoError(t, err)
	require.Equal(t, setWatchesPacket(1, 0), sc3.written[1])
}

// TestGateRefusesSplitWrites: a request not written in one piece could
// hide SetWatches from the gate, so it is not sent and the connection
// closes.
func TestGateRefusesSplitWrites(t *testing.T) {
	var keeper zxidKeeper
	g, sc := gatedSession(t, &keeper, 7)
	req := watchRequestPacket(1, 4, "/b", false)
	_, err := g.Write(req[:6])
	require.ErrorIs(t, err, errSplitWrite)
	require.Len(t, sc.written, 1)
	_, err = readPacket(g)
	require.ErrorIs(t, err, net.ErrClosed)
}

// watchRequestPacket is a getData, exists or getChildren2 request as
// go-zookeeper writes it.
func watchRequestPacket(xid, op int32, path string, watch bool) []byte {
	flag := []byte{0}
	if watch {
		flag[0] = 1
	}
	return packet(i32(xid), i32(op), jstring(path), flag)
}
