package zksession

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

// Opcodes of requests a server passes to the leader: syncs and writes.
// Their answers can renew the lease (see sessionLease).
var leaderOps = map[int32]bool{
	1:  true, // create
	2:  true, // delete
	5:  true, // setData
	7:  true, // setACL
	9:  true, // sync
	13: true, // check
	14: true, // multi
	15: true, // create2
	16: true, // reconfig
	19: true, // createContainer
	20: true, // deleteContainer
	21: true, // createTTL
}

// A wireTracker remembers up to maxAnswered answered requests, at least a
// 1/maxAnswered of the timeout apart (later ones in between are dropped,
// which only makes the base earlier): enough to reach back a whole
// timeout, past the quorum lag, however busy the connection.
const maxAnswered = 64

// answeredRequest is a request of the connection's session and when its
// answer was read.
type answeredRequest struct {
	sent, answered time.Time
}

// wireTracker follows one connection's requests and replies and renews the
// lease from the answers that went through the leader (see sessionLease). Writes
// and reads may come from different goroutines.
type wireTracker struct {
	lease *sessionLease

	mu          sync.Mutex
	out, in     frameScanner
	connected   bool          // the connect response has been seen
	connectSent time.Time     // when the connect request was sent
	askedFor    int64         // the session id the connect request named
	requests    int           // requests seen so far
	session     int64         // the session this connection carries
	timeout     time.Duration // its negotiated timeout
	sent        map[int32]sentRequest
	pings       []time.Time       // pings share one xid and are answered in order
	answered    []answeredRequest // in the order the answers were read
}

// sentRequest is a request waiting for its answer.
type sentRequest struct {
	at     time.Time
	leader bool // a sync or a write
}

func newWireTracker(l *sessionLease) *wireTracker {
	return &wireTracker{lease: l, sent: map[int32]sentRequest{}}
}

// wrote records bytes the client sent; at is taken before the write, so
// that the recorded send time is never later than the real one.
func (w *wireTracker) wrote(p []byte, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.out.feed(p, at, w.onRequest)
}

// handshakeDone reports whether the connect response has been read.
func (w *wireTracker) handshakeDone() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.connected
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
	if len(head) < 8 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(head[0:4]))
	if xid == xidPing {
		w.pings = append(w.pings, started)
		return
	}
	op := int32(binary.BigEndian.Uint32(head[4:8]))
	w.sent[xid] = sentRequest{at: started, leader: leaderOps[op]}
}

func (w *wireTracker) onReply(head []byte, at time.Time) {
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
		w.lease.connected(session, w.connectSent, timeout)
		return
	}
	if len(head) < 16 || w.session == 0 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(head[0:4]))
	code := int32(binary.BigEndian.Uint32(head[12:16]))
	var req sentRequest
	switch xid {
	case xidWatchEvent:
		return
	case xidPing:
		if len(w.pings) == 0 {
			return
		}
		req.at = w.pings[0]
		w.pings = w.pings[1:]
	default:
		r, ok := w.sent[xid]
		if !ok {
			return
		}
		delete(w.sent, xid)
		req = r
	}
	switch code {
	case errCodeSessionExpired:
		w.lease.revoke(w.session)
		return
	case errCodeSessionMoved:
		return
	}
	if req.leader && code == 0 {
		w.lease.confirmed(w.session, w.baseFor(req.at))
	}
	w.remember(answeredRequest{sent: req.at, answered: at})
}

// baseFor returns the latest moment at which the leader is known to have
// heard from the session, given that a request sent at t went through the
// leader: the connect request, or the latest request the server had
// answered a quorum lag before t.
func (w *wireTracker) baseFor(t time.Time) time.Time {
	cutoff := t.Add(-time.Duration(float64(w.timeout) * quorumLagFraction))
	base := w.connectSent
	for _, a := range w.answered {
		if !a.answered.After(cutoff) && a.sent.After(base) {
			base = a.sent
		}
	}
	return base
}

// remember records an answered request, keeping the last maxAnswered that
// are far enough apart.
func (w *wireTracker) remember(a answeredRequest) {
	if n := len(w.answered); n > 0 && a.answered.Sub(w.answered[n-1].answered) < w.timeout/maxAnswered {
		return
	}
	if len(w.answered) == maxAnswered {
		copy(w.answered, w.answered[1:])
		w.answered = w.answered[:maxAnswered-1]
	}
	w.answered = append(w.answered, a)
}
