package testcluster

import (
	"bytes"
	"encoding/binary"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// electionHeader builds what a ZooKeeper 3.5+ server sends first on an
// election connection.
func electionHeader(version, sid int64, addr string) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(version))
	b = binary.BigEndian.AppendUint64(b, uint64(sid))
	b = binary.BigEndian.AppendUint32(b, uint32(len(addr)))
	return append(b, addr...)
}

// learnerHeader builds a learner's first QuorumPacket (FOLLOWERINFO = 11)
// with its LearnerInfo, as ZooKeeper 3.8 writes it.
func learnerHeader(sid int64) []byte {
	info := binary.BigEndian.AppendUint64(nil, uint64(sid))
	info = binary.BigEndian.AppendUint32(info, 0x10000)     // protocolVersion
	info = binary.BigEndian.AppendUint64(info, 0)           // configVersion
	b := binary.BigEndian.AppendUint32(nil, 11)             // type
	b = binary.BigEndian.AppendUint64(b, 0x200000000)       // zxid
	b = binary.BigEndian.AppendUint32(b, uint32(len(info))) // data
	b = append(b, info...)
	return binary.BigEndian.AppendUint32(b, 0xffffffff) // authinfo: none
}

func TestReadPeerHeader(t *testing.T) {
	proxyOf := func(sid int64) string {
		if sid >= 1 && sid <= 3 {
			return "127.0.0.1:4000" + string(rune('0'+sid))
		}
		return ""
	}
	rest := []byte("notification bytes")
	for _, tc := range []struct {
		name    string
		kind    peerKind
		in      []byte
		sid     int64
		forward []byte // header as forwarded
	}{
		{"election v1 rewrites the announced address", electionPeerPort,
			electionHeader(electionProtocolV1, 2, "127.0.0.1:38111"), 2,
			electionHeader(electionProtocolV1, 2, "127.0.0.1:40002")},
		{"election v2 with several addresses", electionPeerPort,
			electionHeader(electionProtocolV2, 3, "127.0.0.1:1|127.0.0.2:2"), 3,
			electionHeader(electionProtocolV2, 3, "127.0.0.1:40003")},
		{"election of an unknown server keeps its address", electionPeerPort,
			electionHeader(electionProtocolV1, 9, "10.0.0.9:3888"), 9,
			electionHeader(electionProtocolV1, 9, "10.0.0.9:3888")},
		{"election before 3.5: the id alone", electionPeerPort,
			binary.BigEndian.AppendUint64(nil, 1), 1, binary.BigEndian.AppendUint64(nil, 1)},
		{"learner", quorumPeerPort, learnerHeader(3), 3, learnerHeader(3)[:24]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bytes.NewReader(append(append([]byte(nil), tc.in...), rest...))
			header, sid, err := readPeerHeader(r, tc.kind, proxyOf)
			require.NoError(t, err)
			require.Equal(t, tc.sid, sid)
			require.Equal(t, tc.forward, header)
			left := make([]byte, r.Len())
			_, _ = r.Read(left)
			if tc.kind == quorumPeerPort {
				require.Equal(t, append(append([]byte(nil), tc.in[24:]...), rest...), left, "the rest of the packet stays in the stream")
			} else {
				require.Equal(t, rest, left, "nothing past the identification is consumed")
			}
		})
	}
}

func TestReadPeerHeaderRejects(t *testing.T) {
	none := func(int64) string { return "" }
	for _, tc := range []struct {
		name string
		kind peerKind
		in   []byte
	}{
		{"empty", electionPeerPort, nil},
		{"short id", electionPeerPort, []byte{1, 2, 3}},
		{"unknown protocol version", electionPeerPort, electionHeader(-7, 1, "a:1")},
		{"empty address", electionPeerPort, electionHeader(electionProtocolV1, 1, "")},
		{"address too long", electionPeerPort, binary.BigEndian.AppendUint32(electionHeader(electionProtocolV1, 1, "")[:16], maxElectionAddr+1)},
		{"address cut short", electionPeerPort, electionHeader(electionProtocolV1, 1, "127.0.0.1:1")[:25]},
		{"learner packet cut short", quorumPeerPort, learnerHeader(1)[:20]},
		{"learner packet without a server id", quorumPeerPort, append(binary.BigEndian.AppendUint32(make([]byte, 12), 4), 0, 0, 0, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readPeerHeader(bytes.NewReader(tc.in), tc.kind, none)
			require.ErrorIs(t, err, errPeerHeader)
		})
	}
}

// FuzzReadPeerHeader: no input makes the parser panic, and what it accepts
// is forwarded with the id it reported.
func FuzzReadPeerHeader(f *testing.F) {
	f.Add(electionHeader(electionProtocolV1, 2, "127.0.0.1:1"), false)
	f.Add(electionHeader(electionProtocolV2, 1, "a:1|b:2"), false)
	f.Add(learnerHeader(3), true)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, false)
	f.Fuzz(func(t *testing.T, in []byte, quorum bool) {
		kind := electionPeerPort
		if quorum {
			kind = quorumPeerPort
		}
		header, sid, err := readPeerHeader(bytes.NewReader(in), kind, func(int64) string { return "127.0.0.1:9" })
		if err != nil {
			return
		}
		if kind == quorumPeerPort {
			require.Equal(t, in[:24], header)
			require.Equal(t, sid, int64(binary.BigEndian.Uint64(in[16:24])))
			return
		}
		require.GreaterOrEqual(t, len(header), 8)
	})
}

// newTestQuorumNet puts a quorumNet in front of sinks standing in for the
// election and quorum ports of n servers.
func newTestQuorumNet(t *testing.T, n int) (*quorumNet, []*sink, []*sink) {
	t.Helper()
	var election, quorum []*sink
	var et, qt []string
	for range n {
		e, q := newSink(t), newSink(t)
		election, quorum = append(election, e), append(quorum, q)
		et, qt = append(et, e.ln.Addr().String()), append(qt, q.ln.Addr().String())
	}
	q, err := newQuorumNet(et, qt)
	require.NoError(t, err)
	q.start()
	t.Cleanup(q.close)
	return q, election, quorum
}

func (q *quorumNet) heldBytes() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for l := range q.links {
		n += l.heldBytes()
	}
	return n
}

// TestQuorumNetIsolation: the proxies between the servers pass a peer
// connection on with the announced election address replaced by the
// sender's proxy; isolating the sender holds the open connection silent
// and refuses new ones, from it and to it; healing delivers what was held.
func TestQuorumNetIsolation(t *testing.T) {
	q, election, _ := newTestQuorumNet(t, 3)

	// Server 1 (myid 2) opens an election connection to server 0.
	c, err := net.Dial("tcp", q.electionAddr(0))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write(electionHeader(electionProtocolV1, 2, "127.0.0.1:1"))
	require.NoError(t, err)
	got := election[0].next(t)
	want := electionHeader(electionProtocolV1, 2, q.electionAddr(1))
	testwait.WaitFor(t, 10*time.Second, func() bool {
		return got.received() == string(want)
	}, "server 0 gets the identification, pointing back through the proxies")

	q.setIsolated(1, true)
	_, err = c.Write([]byte("vote"))
	require.NoError(t, err)
	testwait.WaitFor(t, 10*time.Second, func() bool { return q.heldBytes() == 4 }, "the proxies hold what the isolated server sends")
	require.Equal(t, string(want), got.received())

	for _, tc := range []struct {
		name   string
		to     int
		header []byte
	}{
		{"from the isolated server", 2, electionHeader(electionProtocolV1, 2, "127.0.0.1:1")},
		{"to the isolated server", 1, electionHeader(electionProtocolV1, 3, "127.0.0.1:1")},
	} {
		refused, err := net.Dial("tcp", q.electionAddr(tc.to))
		if err == nil { // else the reset came during the handshake
			_, _ = refused.Write(tc.header)
			require.NoError(t, refused.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, err = refused.Read(make([]byte, 1))
			refused.Close()
		}
		require.ErrorIs(t, err, syscall.ECONNRESET, "a connection %s is refused", tc.name)
	}
	select {
	case sc := <-election[2].conns:
		sc.Close()
		t.Fatal("a connection from the isolated server got through")
	case <-time.After(200 * time.Millisecond):
	}

	q.setIsolated(1, false)
	testwait.WaitFor(t, 10*time.Second, func() bool { return got.received() == string(want)+"vote" }, "healing delivers what was held")
}

// TestQuorumNetWaitsForTheLeaderToListen: a learner's connection to a
// leader whose quorum port does not listen yet reaches it once it does,
// as the learner's own retries would without the proxy (the proxy has
// already accepted the connection, so the learner cannot retry).
func TestQuorumNetWaitsForTheLeaderToListen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	target := ln.Addr().String()
	require.NoError(t, ln.Close()) // the leader is not listening yet
	e := newSink(t)
	q, err := newQuorumNet([]string{e.ln.Addr().String(), e.ln.Addr().String()}, []string{target, target})
	require.NoError(t, err)
	q.start()
	defer q.close()

	c, err := net.Dial("tcp", q.quorumAddr(0))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write(learnerHeader(2))
	require.NoError(t, err)
	time.Sleep(time.Second)
	leader, err := net.Listen("tcp", target)
	require.NoError(t, err)
	defer leader.Close()
	require.NoError(t, leader.(*net.TCPListener).SetDeadline(time.Now().Add(10*time.Second)))
	conn, err := leader.Accept()
	require.NoError(t, err, "the learner's connection reaches the leader once it listens")
	defer conn.Close()
	require.Equal(t, string(learnerHeader(2)), readN(t, conn, len(learnerHeader(2))))
}

// TestQuorumNetCloseDoesNotWaitForSilentPeers: closing the proxies ends a
// connection that has not identified itself yet at once.
func TestQuorumNetCloseDoesNotWaitForSilentPeers(t *testing.T) {
	e := newSink(t)
	q, err := newQuorumNet([]string{e.ln.Addr().String()}, []string{e.ln.Addr().String()})
	require.NoError(t, err)
	q.start()
	c, err := net.Dial("tcp", q.electionAddr(0))
	require.NoError(t, err)
	defer c.Close()
	testwait.WaitFor(t, 10*time.Second, func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.opening) == 1
	}, "the proxy waits for the identification")
	start := time.Now()
	q.close()
	require.Less(t, time.Since(start), 5*time.Second)
}
