package zksession

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Wire images of the packets the lease follows.

func packet(body ...[]byte) []byte {
	var b []byte
	for _, p := range body {
		b = append(b, p...)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

func i32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func i64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func connectRequest(session int64) []byte {
	return packet(i32(0), i64(0), i32(6000), i64(session), i32(16), make([]byte, 16))
}

func connectResponse(session int64, timeoutMs int32) []byte {
	return packet(i32(0), i32(timeoutMs), i64(session), i32(16), make([]byte, 16))
}

func request(xid, op int32) []byte { return packet(i32(xid), i32(op), []byte("/path-and-more")) }

func reply(xid int32, code int32) []byte { return packet(i32(xid), i64(42), i32(code), []byte("data")) }

// until returns when the lease of the current session ends on the
// monotonic clock.
func until(l *sessionLease) time.Time { return l.state.Load().lease.Until() }

// connected returns a tracker whose connection carries session 7 with a
// 6s timeout, its connect request sent at sent.
func connected(t *testing.T, l *sessionLease, sent time.Time) *wireTracker {
	t.Helper()
	w := newWireTracker(l)
	w.wrote(connectRequest(0), sent)
	w.read(connectResponse(7, 6000))
	return w
}

func TestLeaseFromConnectResponse(t *testing.T) {
	l := newSessionLease()
	require.False(t, l.held(7))
	connected(t, l, time.Now())
	require.True(t, l.held(7))
	require.False(t, l.held(8))
	require.False(t, l.held(0))
	require.InDelta(t, float64(6*time.Second)*leaseFraction, float64(time.Until(until(l))), float64(100*time.Millisecond))
	require.Equal(t, 6*time.Second, l.timeoutOf(7))
}

const opSync, opGetData, opSetData = 9, 4, 5

// answeredAt records an answered request on w as if it had been sent at
// sent and answered at answered.
func answeredAt(w *wireTracker, xid, op int32, sent, answered time.Time) {
	w.wrote(request(xid, op), sent)
	w.mu.Lock()
	w.in.feed(reply(xid, 0), answered, w.onReply)
	w.mu.Unlock()
}

// Item 3 of the ensemble safety issue: a follower cut off from the leader
// answers pings and reads on its own while the leader expires the session.
// Such answers renew nothing; only a sync or a write, which the leader
// handles, does.
func TestLeaseNotRenewedByFollowerLocalAnswers(t *testing.T) {
	l := newSessionLease()
	start := time.Now().Add(-5 * time.Second)
	w := connected(t, l, start)
	require.False(t, l.held(7), "a connect sent 5s ago holds for 4.5s")
	now := time.Now()
	answeredAt(w, -2, 11, now, now)       // a ping
	answeredAt(w, 1, opGetData, now, now) // a read
	answeredAt(w, 2, 12, now, now)        // getChildren2
	answeredAt(w, -2, 11, now.Add(time.Millisecond), now.Add(time.Millisecond))
	require.False(t, l.held(7), "pings and reads answered by the server prove nothing about the leader")
	require.Equal(t, leaseLapsed, l.status(7))
}

// A sync answered renews the lease from the latest request the server had
// answered a quorum lag before the sync was sent: the follower has passed
// that one on to the leader by then.
func TestLeaseRenewedBySyncFromQuorumLag(t *testing.T) {
	l := newSessionLease()
	const timeout = 6 * time.Second
	lag := time.Duration(float64(timeout) * quorumLagFraction) // 1.875s
	now := time.Now()
	w := connected(t, l, now.Add(-10*time.Second))
	require.False(t, l.held(7))

	// Pings answered 3s, 2s and 1s ago; a sync sent now. The ping of 2s
	// ago was answered more than a lag before the sync: it is the base.
	for i, ago := range []time.Duration{3 * time.Second, 2 * time.Second, time.Second} {
		at := now.Add(-ago)
		answeredAt(w, -2, 11, at, at.Add(5*time.Millisecond))
		_ = i
	}
	answeredAt(w, 10, opSync, now, now.Add(time.Millisecond))
	require.True(t, l.held(7))
	want := now.Add(-2 * time.Second).Add(time.Duration(float64(timeout) * leaseFraction))
	require.Zero(t, until(l).Sub(want), "base = the ping answered 2s ago, the latest a lag (%v) before the sync", lag)

	// A write renews as a sync does; a failed write does not.
	w2 := connected(t, newSessionLease(), now.Add(-10*time.Second))
	answeredAt(w2, -2, 11, now.Add(-2*time.Second), now.Add(-2*time.Second))
	w2.wrote(request(11, opSetData), now)
	w2.read(reply(11, -101))
	require.False(t, w2.lease.held(7), "an error answer renews nothing")
	answeredAt(w2, 12, opSetData, now, now)
	require.True(t, w2.lease.held(7))

	// On a fresh connection the connect request itself is the base: no
	// request was answered a lag before the sync.
	l3 := newSessionLease()
	w3 := connected(t, l3, now.Add(-time.Second))
	before := until(l3)
	answeredAt(w3, 1, opSync, now, now)
	require.Zero(t, until(l3).Sub(before))
}

// The SIGSTOP case: an answer that waited in the socket while the process
// was frozen does not renew the lease from the moment it is read, but from
// when its request (and the ones before it) were sent.
func TestLeaseCountsFromSendTimeNotReadTime(t *testing.T) {
	l := newSessionLease()
	longAgo := time.Now().Add(-20 * time.Second)
	w := connected(t, l, longAgo)
	require.False(t, l.held(7), "a connect sent 20s ago proves nothing about now")
	answeredAt(w, -2, 11, longAgo.Add(time.Second), longAgo.Add(time.Second))
	w.wrote(request(1, opSync), longAgo.Add(5*time.Second)) // a sync before the freeze
	w.read(reply(1, 0))                                     // read after the freeze
	require.False(t, l.held(7))
	require.Equal(t, leaseLapsed, l.status(7))
}

// Item 4: a server may grant another timeout when the client reconnects.
// The lease runs on the shortest ever granted (cut at once to a shorter
// one), and NegotiatedTimeout reports the last granted.
func TestLeaseFollowsRenegotiatedTimeout(t *testing.T) {
	l := newSessionLease()
	now := time.Now()
	w := newWireTracker(l)
	w.wrote(connectRequest(0), now)
	w.read(connectResponse(7, 30000))
	require.Equal(t, 30*time.Second, l.timeoutOf(7))
	require.InDelta(t, float64(22500*time.Millisecond), float64(until(l).Sub(now)), float64(time.Millisecond))

	// Reconnection to another server, which grants 4s.
	w2 := newWireTracker(l)
	w2.wrote(connectRequest(7), now)
	w2.read(connectResponse(7, 4000))
	require.Equal(t, 4*time.Second, l.timeoutOf(7))
	left := until(l).Sub(now)
	require.InDelta(t, float64(3*time.Second), float64(left), float64(time.Millisecond), "the lease must shrink to 3/4 of the new timeout")
	require.True(t, l.held(7))

	// Later renewals use the new timeout too.
	answeredAt(w2, 1, opSync, now.Add(time.Second), now.Add(time.Second))
	require.LessOrEqual(t, until(l).Sub(now), 3*time.Second+time.Second)

	// Granted a longer one again, the lease keeps the shortest: which one
	// the leader goes by, the client cannot tell.
	w3 := newWireTracker(l)
	w3.wrote(connectRequest(7), now)
	w3.read(connectResponse(7, 30000))
	require.Equal(t, 30*time.Second, l.timeoutOf(7), "NegotiatedTimeout reports what the server granted")
	require.Equal(t, 4*time.Second, l.shortestOf(7))
	require.InDelta(t, float64(3*time.Second), float64(until(l).Sub(now)), float64(time.Millisecond))
}

func TestLeaseRevokedByExpiry(t *testing.T) {
	l := newSessionLease()
	w := connected(t, l, time.Now())
	ch := l.changedCh()
	w.wrote(request(3, 4), time.Now())
	w.read(reply(3, errCodeSessionExpired))
	require.False(t, l.held(7))
	require.Equal(t, leaseGone, l.status(7))
	select {
	case <-ch:
	default:
		t.Fatal("revoking did not signal a change")
	}
	// Nothing renews a gone session.
	w.wrote(request(4, opSync), time.Now())
	w.read(reply(4, 0))
	require.Equal(t, leaseGone, l.status(7))

	// A reconnection that finds the session expired revokes it too.
	l2 := newSessionLease()
	connected(t, l2, time.Now())
	w2 := newWireTracker(l2)
	w2.wrote(connectRequest(7), time.Now())
	w2.read(connectResponse(0, 0))
	require.Equal(t, leaseGone, l2.status(7))

	// A new session starts a lease of its own, signalled as a change; the
	// old one stays gone.
	ch = l2.changedCh()
	w3 := newWireTracker(l2)
	w3.wrote(connectRequest(0), time.Now())
	w3.read(connectResponse(9, 4000))
	select {
	case <-ch:
	default:
		t.Fatal("a new session did not signal a change")
	}
	require.True(t, l2.held(9))
	require.Equal(t, leaseGone, l2.status(7))
}

// Packets split across reads and writes at every byte, and several in one
// call, are framed the same.
func TestLeaseFramingAcrossSplits(t *testing.T) {
	l := newSessionLease()
	w := newWireTracker(l)
	stream := append(connectRequest(0), request(5, 4)...)
	now := time.Now()
	for i := range stream {
		w.wrote(stream[i:i+1], now)
	}
	in := append(connectResponse(7, 6000), reply(5, 0)...)
	for i := 0; i < len(in); i += 3 {
		w.read(in[i:min(i+3, len(in))])
	}
	require.True(t, l.held(7))
	require.Empty(t, w.sent)

	// An impossible length stops the tracker instead of misreading.
	w.read([]byte{0xff, 0xff, 0xff, 0xff})
	require.True(t, w.in.broken)
}

func FuzzWireTracker(f *testing.F) {
	f.Add(connectRequest(0), connectResponse(7, 6000))
	f.Add(append(connectRequest(0), request(1, 4)...), append(connectResponse(7, 6000), reply(1, 0)...))
	f.Fuzz(func(t *testing.T, out, in []byte) {
		l := newSessionLease()
		w := newWireTracker(l)
		w.wrote(out, time.Now())
		w.read(in)
		_ = l.held(7)
	})
}

// BenchmarkLeaseHeld is the check the connector's fence makes before every
// message.
func BenchmarkLeaseHeld(b *testing.B) {
	l := newSessionLease()
	l.connected(7, time.Now().Add(time.Hour), 6*time.Second)
	b.ReportAllocs()
	for b.Loop() {
		if !l.held(7) {
			b.Fatal("lease not held")
		}
	}
}
