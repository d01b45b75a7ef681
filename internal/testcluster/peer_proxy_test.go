package testcluster

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
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
