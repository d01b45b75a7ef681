package zksession

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// go-zookeeper v1.0.4 has a data race on every reconnection of a session
// that has watches: its connection loop starts the receive loop and then,
// in sendSetWatches, reads the last zxid seen to build the SetWatches
// request, while the receive loop writes that field on every answer that
// carries a zxid (go-zookeeper/zk#35 proposes a fix; it was never merged).
// Nothing orders the two: answers to requests that were queued while the
// connection was down reach the receive loop at once.
//
// gatedConn removes the race from outside the library, on the connection
// go-zookeeper gets from our dialer. It hands the receive loop whole
// packets, and from the connect response of a session that has watches
// until go-zookeeper writes its SetWatches request, it holds back every
// answer that would make the receive loop write the zxid (an answer to a
// request, with a zxid above zero). go-zookeeper reads the zxid before it
// queues SetWatches, so the chain read -> queue -> send loop -> Write of
// SetWatches -> release -> Read returns -> write of the zxid orders the
// write after the read. Watch events, pings and the answers to the
// credentials go-zookeeper sends again before its send loop starts (zxid
// 0) pass, so the hold cannot stop what releases it.
//
// go-zookeeper sends SetWatches exactly when its watch table is not empty
// at that point. The gate knows the table through watchTable, which
// replays on the wire what go-zookeeper does to its table: an answer
// without error to a getData, exists or getChildren request with the watch
// flag adds a watch (exists also on NoNode), a watch event removes those
// its type fires, an expired session clears it. The table changes only in
// the receive loop, which has ended before the next connection starts, so
// the replay at the connect response is exact.
//
// The one case the gate does not cover: a session with no watch when its
// connection dropped, one of whose watch requests, queued across the
// reconnection, is answered on the new connection (go-zookeeper's table
// is then no longer empty) and followed by another answer with a zxid, all
// before go-zookeeper's loop, running at the same time, looks at its
// table. Had the loop looked first, no SetWatches would come, and nothing
// on the wire tells the two apart, so the gate does not hold there rather
// than wait for a SetWatches that may never come.
//
// Cost: after a reconnection with watches, the answers queued behind the
// connect response wait until go-zookeeper has built and written
// SetWatches (one pass of its loops, no network round trip); each packet
// read is copied once.

// ZooKeeper opcodes and error codes the gate reads (go-zookeeper's
// constants.go; ZooKeeper's ZooDefs.OpCode).
const (
	wireOpExists       = 3
	wireOpGetData      = 4
	wireOpGetChildren2 = 12
	wireOpSetAuth      = 100
	wireOpSetWatches   = 101

	errCodeNoNode = -101
)

// Watch event types (zk.EventNodeCreated, ...).
const (
	eventNodeCreated         = 1
	eventNodeDeleted         = 2
	eventNodeDataChanged     = 3
	eventNodeChildrenChanged = 4
)

// watchKind is go-zookeeper's watchType: which table a watch is kept in.
type watchKind uint8

const (
	watchData watchKind = iota
	watchExist
	watchChild
)

type watchKey struct {
	path string
	kind watchKind
}

// watchTable replays go-zookeeper's watch table of one link (all its
// connections). The zero value is an empty table.
type watchTable struct {
	mu    sync.Mutex
	set   map[watchKey]struct{}
	blind bool // a write could not be read: the replay is not trusted again

	// What the gate cost the link's connections: answers held, and the
	// total time they waited (tests read them).
	holds, heldNanos atomic.Int64
}

func (w *watchTable) add(k watchKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.set == nil {
		w.set = map[watchKey]struct{}{}
	}
	w.set[k] = struct{}{}
}

// fire removes the watches an event of type typ on path triggers, as
// go-zookeeper's notifyWatches does.
func (w *watchTable) fire(typ int32, path string) {
	var kinds []watchKind
	switch typ {
	case eventNodeCreated:
		kinds = []watchKind{watchExist}
	case eventNodeDataChanged:
		kinds = []watchKind{watchExist, watchData}
	case eventNodeChildrenChanged:
		kinds = []watchKind{watchChild}
	case eventNodeDeleted:
		kinds = []watchKind{watchExist, watchData, watchChild}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range kinds {
		delete(w.set, watchKey{path, k})
	}
}

func (w *watchTable) clear() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.set = nil
}

func (w *watchTable) loseSight() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.blind = true
}

// expectSetWatches reports whether go-zookeeper will send SetWatches on
// the connection being established.
func (w *watchTable) expectSetWatches() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.blind && len(w.set) > 0
}

// watchRequest is a request with the watch flag, waiting for its answer.
type watchRequest struct {
	op   int32
	path string
}

// gatedConn is one connection go-zookeeper reads through the gate. Reads
// come from one goroutine at a time (authenticate, then the receive loop),
// as do writes (authenticate, then the send loop).
type gatedConn struct {
	net.Conn
	table *watchTable

	// Read side.
	buf         []byte // reused for every packet, as go-zookeeper's own buffer
	pkt         []byte // the packet being handed out, length prefix included
	off         int
	connectRead bool // the connect response was read
	pktConnect  bool // pkt is the connect response

	// Write side.
	connectWritten bool

	mu           sync.Mutex
	hold         bool // hold answers with a zxid until released
	released     chan struct{}
	releaseOnce  sync.Once
	closed       chan struct{}
	closeOnce    sync.Once
	readDeadline time.Time
	watching     map[int32]watchRequest // by xid
	auth         map[int32]bool         // xids of SetAuth requests
}

func newGatedConn(c net.Conn, table *watchTable) *gatedConn {
	return &gatedConn{Conn: c, table: table, released: make(chan struct{}), closed: make(chan struct{}),
		watching: map[int32]watchRequest{}, auth: map[int32]bool{}}
}

func (c *gatedConn) release() { c.releaseOnce.Do(func() { close(c.released) }) }

// Close wakes a held read.
func (c *gatedConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// SetReadDeadline also bounds a held read, as a socket's would.
func (c *gatedConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.readDeadline = t
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline sets both deadlines.
func (c *gatedConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.readDeadline = t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

// errPacketLength fails a read whose length prefix cannot be a packet.
var errPacketLength = errors.New("ZooKeeper packet length out of range; the stream lost its framing")

// Read hands out the current packet, reading the next one whole (and
// holding it if it must wait) when the last is done.
func (c *gatedConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if c.off == len(c.pkt) {
		if err := c.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.pkt[c.off:])
	c.off += n
	if c.off == len(c.pkt) {
		c.delivered()
	}
	return n, nil
}

// next reads one packet from the server and waits if it must be held.
func (c *gatedConn) next() error {
	var head [4]byte
	if _, err := io.ReadFull(c.Conn, head[:]); err != nil {
		return err
	}
	n := int32(binary.BigEndian.Uint32(head[:]))
	if n < 0 || n > maxWirePacket {
		return errPacketLength
	}
	if cap(c.buf) < 4+int(n) {
		c.buf = make([]byte, 4+int(n))
	}
	pkt := c.buf[:4+int(n)]
	copy(pkt, head[:])
	if _, err := io.ReadFull(c.Conn, pkt[4:]); err != nil {
		return err
	}
	c.pkt, c.off = pkt, 0
	body := pkt[4:]
	c.pktConnect = !c.connectRead
	if c.pktConnect {
		c.connectRead = true
		c.connected(body)
		return nil
	}
	if len(body) < 16 {
		return nil
	}
	xid := int32(binary.BigEndian.Uint32(body[0:4]))
	zxid := int64(binary.BigEndian.Uint64(body[4:12]))
	if xid < 0 || zxid <= 0 {
		return nil // go-zookeeper's receive loop does not write its zxid
	}
	c.mu.Lock()
	wait := c.hold && !c.auth[xid]
	deadline := c.readDeadline
	c.mu.Unlock()
	if !wait {
		return nil
	}
	return c.await(deadline)
}

// connected reads the connect response (protocol version, timeout,
// session id, password) and decides whether answers must wait.
func (c *gatedConn) connected(body []byte) {
	if len(body) < 16 {
		return
	}
	if binary.BigEndian.Uint64(body[8:16]) == 0 {
		// go-zookeeper's session expired: it clears its watch table and
		// sends no SetWatches.
		c.table.clear()
		return
	}
	c.mu.Lock()
	c.hold = c.table.expectSetWatches()
	c.mu.Unlock()
}

func (c *gatedConn) await(deadline time.Time) error {
	var expired <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		expired = t.C
	}
	start := time.Now()
	defer func() {
		c.table.holds.Add(1)
		c.table.heldNanos.Add(int64(time.Since(start)))
	}()
	select {
	case <-c.released:
		return nil
	case <-c.closed:
		return net.ErrClosed
	case <-expired:
		return fmt.Errorf("held until go-zookeeper sent SetWatches: %w", os.ErrDeadlineExceeded)
	}
}

// delivered replays on the watch table what go-zookeeper's receive loop
// does with the packet it has just read whole.
func (c *gatedConn) delivered() {
	body := c.pkt[4:]
	if c.pktConnect || len(body) < 16 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(body[0:4]))
	code := int32(binary.BigEndian.Uint32(body[12:16]))
	if xid == xidWatchEvent {
		// Event: type, state, path.
		if len(body) < 24 {
			return
		}
		typ := int32(binary.BigEndian.Uint32(body[16:20]))
		if path, ok := readString(body[24:]); ok {
			c.table.fire(typ, path)
		}
		return
	}
	if xid < 0 {
		return
	}
	c.mu.Lock()
	req, ok := c.watching[xid]
	delete(c.watching, xid)
	delete(c.auth, xid)
	c.mu.Unlock()
	if !ok {
		return
	}
	switch {
	case code == 0 && req.op == wireOpGetChildren2:
		c.table.add(watchKey{req.path, watchChild})
	case code == 0:
		c.table.add(watchKey{req.path, watchData})
	case code == errCodeNoNode && req.op == wireOpExists:
		c.table.add(watchKey{req.path, watchExist})
	}
}

// Write notes the requests the gate needs (those with a watch, SetAuth)
// and releases held answers when SetWatches goes out. go-zookeeper writes
// each packet with one Write.
func (c *gatedConn) Write(p []byte) (int, error) {
	if !c.connectWritten {
		c.connectWritten = true
		return c.Conn.Write(p)
	}
	if len(p) < 12 || int(binary.BigEndian.Uint32(p[:4]))+4 != len(p) {
		// Not one whole packet: the gate cannot follow the requests any
		// more, so it must never hold again.
		c.table.loseSight()
		c.release()
		return c.Conn.Write(p)
	}
	xid := int32(binary.BigEndian.Uint32(p[4:8]))
	switch op := int32(binary.BigEndian.Uint32(p[8:12])); op {
	case wireOpSetWatches:
		c.release() // before the write: the chain needs only its start
	case wireOpSetAuth:
		c.mu.Lock()
		c.auth[xid] = true
		c.mu.Unlock()
	case wireOpExists, wireOpGetData, wireOpGetChildren2:
		path, ok := readString(p[12:])
		if ok && 12+4+len(path) < len(p) && p[12+4+len(path)] != 0 {
			c.mu.Lock()
			c.watching[xid] = watchRequest{op: op, path: path}
			c.mu.Unlock()
		}
	}
	return c.Conn.Write(p)
}

// readString reads a jute string (int32 length, bytes) at the start of b.
func readString(b []byte) (string, bool) {
	if len(b) < 4 {
		return "", false
	}
	n := int32(binary.BigEndian.Uint32(b[:4]))
	if n < 0 || int(n) > len(b)-4 {
		return "", false
	}
	return string(b[4 : 4+n]), true
}
