package zkutil

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

// connected returns a tracker whose connection carries session 7 with a
// 6s timeout, its connect request sent at sent.
func connected(t *testing.T, l *lease, sent time.Time) *wireTracker {
	t.Helper()
	w := newWireTracker(l)
	w.wrote(connectRequest(0), sent)
	w.read(connectResponse(7, 6000))
	return w
}

func TestLeaseFromConnectResponse(t *testing.T) {
	l := newLease()
	require.False(t, l.held(7))
	connected(t, l, time.Now())
	require.True(t, l.held(7))
	require.False(t, l.held(8))
	require.False(t, l.held(0))
	require.InDelta(t, float64(6*time.Second)*LeaseFraction, float64(l.state.Load().until-time.Since(l.base)), float64(100*time.Millisecond))
	require.Equal(t, 6*time.Second, l.timeoutOf(7))
}

// The SIGSTOP case: an answer that waited in the socket while the process
// was frozen does not renew the lease from the moment it is read, but from
// when its request was sent.
func TestLeaseCountsFromSendTimeNotReadTime(t *testing.T) {
	l := newLease()
	longAgo := time.Now().Add(-10 * time.Second)
	w := connected(t, l, longAgo)
	require.False(t, l.held(7), "a connect sent 10s ago proves nothing about now")
	w.wrote(request(-2, 11), longAgo.Add(time.Second)) // a ping before the freeze
	w.read(reply(-2, 0))                               // read after the freeze
	require.False(t, l.held(7))
	require.Equal(t, leaseLapsed, l.status(7))

	// A ping sent now and answered renews it.
	w.wrote(request(-2, 11), time.Now())
	w.read(reply(-2, 0))
	require.True(t, l.held(7))
}

func TestLeaseRenewsFromMatchingRequest(t *testing.T) {
	l := newLease()
	w := connected(t, l, time.Now().Add(-5*time.Second))
	require.False(t, l.held(7))
	old, recent := time.Now().Add(-5*time.Second), time.Now()
	w.wrote(request(1, 4), old)
	w.wrote(request(2, 4), recent)
	w.read(reply(1, 0)) // answers the old request: still lapsed
	require.False(t, l.held(7))
	w.read(reply(-1, 0)) // a watch notification proves nothing
	require.False(t, l.held(7))
	w.read(reply(2, -101)) // NoNode is still an answer of a live session
	require.True(t, l.held(7))
	w.read(reply(2, 0)) // unknown xid: ignored
	require.True(t, l.held(7))
}

func TestLeaseRevokedByExpiry(t *testing.T) {
	l := newLease()
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
	w.wrote(request(4, 4), time.Now())
	w.read(reply(4, 0))
	require.Equal(t, leaseGone, l.status(7))

	// A reconnection that finds the session expired revokes it too.
	l2 := newLease()
	connected(t, l2, time.Now())
	w2 := newWireTracker(l2)
	w2.wrote(connectRequest(7), time.Now())
	w2.read(connectResponse(0, 0))
	require.Equal(t, leaseGone, l2.status(7))

	// A new session starts a lease of its own; the old one stays gone.
	w3 := newWireTracker(l2)
	w3.wrote(connectRequest(0), time.Now())
	w3.read(connectResponse(9, 4000))
	require.True(t, l2.held(9))
	require.Equal(t, leaseGone, l2.status(7))
}

// Packets split across reads and writes at every byte, and several in one
// call, are framed the same.
func TestLeaseFramingAcrossSplits(t *testing.T) {
	l := newLease()
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
		l := newLease()
		w := newWireTracker(l)
		w.wrote(out, time.Now())
		w.read(in)
		_ = l.held(7)
	})
}

// BenchmarkLeaseHeld is the check the connector's fence makes before every
// message.
func BenchmarkLeaseHeld(b *testing.B) {
	l := newLease()
	l.renew(7, time.Now().Add(time.Hour), 6*time.Second, true)
	b.ReportAllocs()
	for b.Loop() {
		if !l.held(7) {
			b.Fatal("lease not held")
		}
	}
}
