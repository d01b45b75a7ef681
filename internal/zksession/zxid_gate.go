package zksession

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync/atomic"
)

// go-zookeeper v1.0.4 has a data race on reconnections: its connection
// loop starts the receive loop and then, in sendSetWatches, reads the last
// zxid seen to build the SetWatches request, while the receive loop writes
// that field on every answer that carries a zxid (go-zookeeper/zk#35
// proposes a fix; it was never merged). Nothing orders the two: answers to
// requests that were queued while the connection was down reach the
// receive loop at once.
//
// gatedConn removes the race from outside the library, on the connection
// go-zookeeper gets from our dialer, by keeping the zxid for it: the
// receive loop writes the field only for an answer to a request whose
// zxid is above zero, and the gate hands go-zookeeper every such answer
// with its zxid set to zero, so the field is never written after the
// connection's start. The gate keeps the zxid go-zookeeper would have kept
// (zxidKeeper) and writes it where go-zookeeper would have sent its own:
// the last zxid seen in the connect request, and in SetWatches the last
// zxid seen before the connection's connect response, the value the Java
// client sends (SetWatches asks the server to fire the watches whose nodes
// changed after it). That holds whatever go-zookeeper's watch table holds
// and whenever its loop looks at it, so no case is left: a session with no
// watch when its connection dropped, whose watch request queued across the
// reconnection is answered before go-zookeeper's loop looks at its table,
// is no different from any other. (There SetWatches also names the watch
// set on the new connection, from the older zxid: it may fire once for a
// change its answer already showed, a spurious event rather than a missed
// one.)
//
// go-zookeeper reads the zxid of an answer nowhere else: every request
// method drops the zxid the receive loop passes it. Watch events, pings
// and the answers to credentials (negative xids) reach it unchanged.
//
// Cost: every packet read is copied once (into a buffer reused across
// packets), and the connect request and SetWatches once more when they are
// written. Nothing waits.

// ZooKeeper opcodes the gate reads (go-zookeeper's constants.go;
// ZooKeeper's ZooDefs.OpCode).
const wireOpSetWatches = 101

// zxidKeeper keeps, for one link (all its connections), the zxid
// go-zookeeper would keep in its lastZxid field. The zero value has seen
// none.
type zxidKeeper struct {
	last atomic.Int64

	// Answers whose zxid the gate kept from go-zookeeper, and SetWatches
	// requests it wrote the zxid into (tests read them).
	kept, setWatches atomic.Int64
}

// gatedConn is one connection go-zookeeper reads through the gate. Reads
// come from one goroutine at a time (go-zookeeper's handshake, then its
// receive loop), as do writes (the handshake, then the send loop).
type gatedConn struct {
	net.Conn
	zxid *zxidKeeper

	// Read side.
	buf         []byte // reused for every packet, as go-zookeeper's own buffer
	pkt         []byte // the packet being handed out, length prefix included
	off         int
	connectRead bool // the connect response was read

	// Written by the handshake's read of the connect response, read by the
	// send loop, which go-zookeeper starts after it.
	atConnect atomic.Int64 // the last zxid seen when the connect response came

	// Write side.
	connectWritten bool
	out            []byte // the copy of a request the gate writes a zxid into
}

func newGatedConn(c net.Conn, zxid *zxidKeeper) *gatedConn {
	return &gatedConn{Conn: c, zxid: zxid}
}

// errPacketLength fails a read whose length prefix cannot be a packet.
var errPacketLength = errors.New("ZooKeeper packet length out of range; the stream lost its framing")

// errSplitWrite fails a write that is not one whole packet: the gate could
// not find SetWatches in it. go-zookeeper writes each packet with one
// Write.
var errSplitWrite = errors.New("a ZooKeeper request was not written in one piece; refusing to send it")

// Read hands out the current packet, reading the next one whole when the
// last is done.
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
	return n, nil
}

// next reads one packet from the server and keeps its zxid from
// go-zookeeper.
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
	if !c.connectRead {
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
	c.zxid.last.Store(zxid)
	c.zxid.kept.Add(1)
	binary.BigEndian.PutUint64(body[4:12], 0)
	return nil
}

// connected reads the connect response (protocol version, timeout,
// session id, password).
func (c *gatedConn) connected(body []byte) {
	if len(body) >= 16 && binary.BigEndian.Uint64(body[8:16]) == 0 {
		// go-zookeeper's session expired: it forgets its zxid.
		c.zxid.last.Store(0)
	}
	c.atConnect.Store(c.zxid.last.Load())
}

// Write sends go-zookeeper's requests, with the zxid the gate keeps in
// the connect request and in SetWatches.
func (c *gatedConn) Write(p []byte) (int, error) {
	if len(p) < 12 || int(binary.BigEndian.Uint32(p[:4]))+4 != len(p) {
		_ = c.Conn.Close()
		return 0, errSplitWrite
	}
	if !c.connectWritten {
		// Length, protocol version, last zxid seen, ...
		c.connectWritten = true
		return c.writeZxid(p, 8, c.zxid.last.Load())
	}
	if int32(binary.BigEndian.Uint32(p[8:12])) == wireOpSetWatches && len(p) >= 20 {
		// Length, xid, opcode, relative zxid, the watches.
		c.zxid.setWatches.Add(1)
		return c.writeZxid(p, 12, c.atConnect.Load())
	}
	return c.Conn.Write(p)
}

// writeZxid writes a copy of p with zxid at offset at (p itself must not
// change).
func (c *gatedConn) writeZxid(p []byte, at int, zxid int64) (int, error) {
	c.out = append(c.out[:0], p...)
	binary.BigEndian.PutUint64(c.out[at:at+8], uint64(zxid))
	return c.Conn.Write(c.out)
}
