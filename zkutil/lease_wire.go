package zkutil

import (
	"encoding/binary"
	"sync"
	"time"
)

// ZooKeeper's wire format, as far as the lease needs it. Every packet is a
// 4-byte big-endian length and a body. The first packet each way on a
// connection is the connect request and its response; after that, requests
// start with their xid and replies with xid, zxid and an error code.
const (
	maxWirePacket = 64 << 20 // larger lengths mean we lost the framing

	xidWatchEvent = -1 // a watch notification, not an answer
	xidPing       = -2

	errCodeSessionExpired = -112
	errCodeSessionMoved   = -118
)

// wireHead is what a frameScanner keeps of each packet: enough for the
// fields of the connect request (session id at body offset 16) and of a
// reply header (error code at body offset 12).
const wireHead = 24

// frameScanner splits a byte stream into ZooKeeper packets and reports the
// first wireHead bytes of each body, with the time its first byte was seen.
type frameScanner struct {
	lenBuf    [4]byte
	lenN      int
	remaining int // body bytes still to come; 0 between packets
	head      [wireHead]byte
	headN     int
	reported  bool
	started   time.Time
	broken    bool
}

// feed scans p, seen at now, and calls on for every packet whose head is
// complete. It stops for good on an impossible length.
func (f *frameScanner) feed(p []byte, now time.Time, on func(head []byte, started time.Time)) {
	for len(p) > 0 && !f.broken {
		if f.remaining == 0 {
			if f.lenN == 0 {
				f.started = now
			}
			n := copy(f.lenBuf[f.lenN:], p)
			f.lenN += n
			p = p[n:]
			if f.lenN < 4 {
				return
			}
			f.lenN = 0
			l := int32(binary.BigEndian.Uint32(f.lenBuf[:]))
			if l < 0 || l > maxWirePacket {
				f.broken = true
				return
			}
			if l == 0 {
				on(nil, f.started)
				continue
			}
			f.remaining, f.headN, f.reported = int(l), 0, false
			continue
		}
		k := min(len(p), f.remaining)
		if !f.reported && f.headN < wireHead {
			f.headN += copy(f.head[f.headN:], p[:k])
		}
		f.remaining -= k
		p = p[k:]
		if !f.reported && (f.headN == wireHead || f.remaining == 0) {
			f.reported = true
			on(f.head[:f.headN], f.started)
		}
	}
}

// wireTracker follows one connection's requests and replies and renews the
// lease with the send time of every request the server answers in a live
// session. Writes and reads may come from different goroutines.
type wireTracker struct {
	lease *lease

	mu          sync.Mutex
	out, in     frameScanner
	connected   bool          // the connect response has been seen
	connectSent time.Time     // when the connect request was sent
	askedFor    int64         // the session id the connect request named
	requests    int           // requests seen so far
	session     int64         // the session this connection carries
	timeout     time.Duration // its negotiated timeout
	sent        map[int32]time.Time
	pings       []time.Time // pings share one xid and are answered in order
}

func newWireTracker(l *lease) *wireTracker {
	return &wireTracker{lease: l, sent: map[int32]time.Time{}}
}

// wrote records bytes the client sent; at is taken before the write, so
// that the recorded send time is never later than the real one.
func (w *wireTracker) wrote(p []byte, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.out.feed(p, at, w.onRequest)
}

// read records bytes the client received.
func (w *wireTracker) read(p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.in.feed(p, time.Now(), w.onReply)
}

func (w *wireTracker) onRequest(head []byte, started time.Time) {
	w.requests++
	if w.requests == 1 {
		w.connectSent = started
		if len(head) >= 24 {
			w.askedFor = int64(binary.BigEndian.Uint64(head[16:24]))
		}
		return
	}
	if len(head) < 4 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(head[0:4]))
	if xid == xidPing {
		w.pings = append(w.pings, started)
		return
	}
	w.sent[xid] = started
}

func (w *wireTracker) onReply(head []byte, _ time.Time) {
	if !w.connected {
		w.connected = true
		if len(head) < 16 || w.requests == 0 {
			return
		}
		timeout := time.Duration(int32(binary.BigEndian.Uint32(head[4:8]))) * time.Millisecond
		session := int64(binary.BigEndian.Uint64(head[8:16]))
		if session == 0 || timeout <= 0 {
			// The server no longer knows the session we asked for.
			if w.askedFor != 0 {
				w.lease.revoke(w.askedFor)
			}
			return
		}
		w.session, w.timeout = session, timeout
		w.lease.renew(session, w.connectSent, timeout, true)
		return
	}
	if len(head) < 16 || w.session == 0 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(head[0:4]))
	code := int32(binary.BigEndian.Uint32(head[12:16]))
	var sentAt time.Time
	switch xid {
	case xidWatchEvent:
		return
	case xidPing:
		if len(w.pings) == 0 {
			return
		}
		sentAt = w.pings[0]
		w.pings = w.pings[1:]
	default:
		t, ok := w.sent[xid]
		if !ok {
			return
		}
		delete(w.sent, xid)
		sentAt = t
	}
	switch code {
	case errCodeSessionExpired:
		w.lease.revoke(w.session)
	case errCodeSessionMoved:
	default:
		w.lease.renew(w.session, sentAt, w.timeout, false)
	}
}
