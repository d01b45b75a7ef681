package kip848

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

var topicA = UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// TestHeartbeatRequestGolden checks the layout byte by byte against the
// message definition: compact strings, null as 0, the v1-only regex.
func TestHeartbeatRequestGolden(t *testing.T) {
	req := &HeartbeatRequest{GroupID: "g", MemberID: "m", MemberEpoch: 0, RebalanceTimeoutMs: 300000,
		SubscribedTopicNames: []string{"t"}, ServerAssignor: ptr("uniform"),
		TopicPartitions: []TopicPartitions{{TopicID: topicA, Partitions: []int32{2}}}}
	got, err := req.Encode(1)
	require.NoError(t, err)
	var want []byte
	want = append(want, 2, 'g') // GroupId
	want = append(want, 2, 'm') // MemberId
	want = append(want, 0, 0, 0, 0)
	want = append(want, 0)                // InstanceId null
	want = append(want, 0)                // RackId null
	want = append(want, 0, 4, 0x93, 0xe0) // 300000
	want = append(want, 2, 2, 't')        // [t]
	want = append(want, 0)                // SubscribedTopicRegex null (v1)
	want = append(want, 8, 'u', 'n', 'i', 'f', 'o', 'r', 'm')
	want = append(want, 2)            // one topic
	want = append(want, topicA[:]...) // its id
	want = append(want, 2, 0, 0, 0, 2, 0)
	want = append(want, 0) // request tags
	require.Equal(t, want, got)

	v0, err := req.Encode(0)
	require.NoError(t, err)
	require.Len(t, v0, len(got)-1, "version 0 has no SubscribedTopicRegex")
	_, err = (&HeartbeatRequest{SubscribedTopicRegex: ptr("x.*")}).Encode(0)
	require.Error(t, err)
	_, err = req.Encode(2)
	require.Error(t, err)
}

func TestHeartbeatRoundTrip(t *testing.T) {
	reqs := []*HeartbeatRequest{
		{GroupID: "group", MemberID: NewMemberID(), MemberEpoch: 7, InstanceID: ptr("i-1"), RackID: ptr("r"),
			RebalanceTimeoutMs: -1, SubscribedTopicNames: []string{"a", "b"}, SubscribedTopicRegex: ptr("x.*"),
			ServerAssignor: ptr("range"), TopicPartitions: []TopicPartitions{{TopicID: topicA, Partitions: []int32{0, 1, 5}}, {Partitions: []int32{}}}},
		{GroupID: "g", MemberID: "", MemberEpoch: EpochLeave, RebalanceTimeoutMs: -1},
		{GroupID: "g", MemberID: "m", MemberEpoch: 3, RebalanceTimeoutMs: -1, TopicPartitions: []TopicPartitions{}, SubscribedTopicNames: []string{}},
	}
	for _, req := range reqs {
		for _, v := range []int16{0, 1} {
			if v == 0 && req.SubscribedTopicRegex != nil {
				continue
			}
			b, err := req.Encode(v)
			require.NoError(t, err)
			got, err := DecodeHeartbeatRequest(b, v)
			require.NoError(t, err)
			require.Equal(t, req, got)
		}
	}
	resps := []*HeartbeatResponse{
		{ThrottleTimeMs: 1, MemberID: ptr("m"), MemberEpoch: 12, HeartbeatIntervalMs: 5000,
			Assignment: []TopicPartitions{{TopicID: topicA, Partitions: []int32{3, 4}}}},
		{ErrorCode: 110, ErrorMessage: ptr("fenced"), MemberEpoch: -1},
		{MemberEpoch: 2, HeartbeatIntervalMs: 100, Assignment: []TopicPartitions{}},
	}
	for _, resp := range resps {
		got, err := DecodeHeartbeatResponse(resp.Encode())
		require.NoError(t, err)
		require.Equal(t, resp, got)
	}
}

// TestHeartbeatResponseSkipsTags: tagged fields a newer broker adds are
// skipped, not refused.
func TestHeartbeatResponseSkipsTags(t *testing.T) {
	b := (&HeartbeatResponse{MemberEpoch: 4, HeartbeatIntervalMs: 9}).Encode()
	// Replace the final empty tag section with one tag (7) of 3 bytes.
	b = append(b[:len(b)-1], 1, 7, 3, 'x', 'y', 'z')
	got, err := DecodeHeartbeatResponse(b)
	require.NoError(t, err)
	require.Equal(t, int32(4), got.MemberEpoch)
}

func TestOffsetCommitRoundTrip(t *testing.T) {
	req := &OffsetCommitRequest{GroupID: "g", MemberEpoch: 5, MemberID: "m", GroupInstanceID: ptr("i"),
		Topics: []CommitTopic{{Name: "t", Partitions: []CommitPartition{{Partition: 1, Offset: 42, LeaderEpoch: -1}, {Partition: 2, Offset: 7, LeaderEpoch: 3, Metadata: ptr("md")}}}}}
	got, err := DecodeOffsetCommitRequest(req.Encode())
	require.NoError(t, err)
	require.Equal(t, req, got)
	resp := &OffsetCommitResponse{ThrottleTimeMs: 3, Topics: []TopicErrors{{Name: "t", Partitions: []PartitionError{{1, 0}, {2, 113}}}}}
	gotResp, err := DecodeOffsetCommitResponse(resp.Encode())
	require.NoError(t, err)
	require.Equal(t, resp, gotResp)
}

func TestApiVersionsRoundTrip(t *testing.T) {
	apis := map[int16]VersionRange{68: {0, 1}, 8: {2, 10}}
	code, got, err := DecodeApiVersionsResponse(EncodeApiVersionsResponse(0, apis))
	require.NoError(t, err)
	require.Zero(t, code)
	require.Equal(t, apis, got)
}

// decoders are every decoder of data read from the network, with a valid
// input each.
func decoders() map[string]struct {
	valid  []byte
	decode func([]byte) error
} {
	hb := (&HeartbeatResponse{MemberID: ptr("member"), MemberEpoch: 3, HeartbeatIntervalMs: 5000, ErrorMessage: ptr("x"),
		Assignment: []TopicPartitions{{TopicID: topicA, Partitions: []int32{0, 1, 2}}}}).Encode()
	oc := (&OffsetCommitResponse{Topics: []TopicErrors{{Name: "topic", Partitions: []PartitionError{{0, 0}, {1, 0}}}}}).Encode()
	av := EncodeApiVersionsResponse(0, map[int16]VersionRange{68: {0, 1}})
	hbReq, _ := (&HeartbeatRequest{GroupID: "g", MemberID: "m", SubscribedTopicNames: []string{"a"},
		TopicPartitions: []TopicPartitions{{TopicID: topicA, Partitions: []int32{1}}}}).Encode(1)
	jg := (&JoinGroupResponse{GenerationID: 4, ProtocolName: ptr("range"), Leader: "a", MemberID: "a", SkipAssignment: true,
		Members: []JoinGroupMember{{MemberID: "a", GroupInstanceID: ptr("i"), Metadata: []byte{0, 3}}}}).Encode()
	jgReq := (&JoinGroupRequest{GroupID: "g", ProtocolType: "consumer", Protocols: []JoinGroupProtocol{{Name: "range", Metadata: []byte{1}}}}).Encode()
	return map[string]struct {
		valid  []byte
		decode func([]byte) error
	}{
		"join group response": {jg, func(b []byte) error { _, err := DecodeJoinGroupResponse(b); return err }},
		"join group request":  {jgReq, func(b []byte) error { _, err := DecodeJoinGroupRequest(b); return err }},
		"heartbeat response":  {hb, func(b []byte) error { _, err := DecodeHeartbeatResponse(b); return err }},
		"heartbeat request":   {hbReq, func(b []byte) error { _, err := DecodeHeartbeatRequest(b, 1); return err }},
		"commit response":     {oc, func(b []byte) error { _, err := DecodeOffsetCommitResponse(b); return err }},
		"api versions":        {av, func(b []byte) error { _, _, err := DecodeApiVersionsResponse(b); return err }},
		"sasl handshake":      {encodeSaslHandshakeResponse(0, "PLAIN", "SCRAM-SHA-512"), func(b []byte) error { _, _, err := DecodeSaslHandshakeResponse(b); return err }},
		"sasl authenticate":   {encodeSaslAuthenticateResponse(0, "m", []byte("r=abc")), func(b []byte) error { _, _, _, err := DecodeSaslAuthenticateResponse(b); return err }},
	}
}

// TestDecodeTruncated: every strict prefix of a valid answer, and the
// answer with a byte too many, is refused with ErrMalformed, no panic.
func TestDecodeTruncated(t *testing.T) {
	for name, dec := range decoders() {
		require.NoError(t, dec.decode(dec.valid), name)
		for n := range len(dec.valid) {
			err := dec.decode(dec.valid[:n])
			require.ErrorIs(t, err, ErrMalformed, "%s cut at %d", name, n)
		}
		require.ErrorIs(t, dec.decode(append(bytes.Clone(dec.valid), 0)), ErrMalformed, name)
	}
}

// TestDecodeHugeLengths: lengths that claim far more than the answer
// holds are refused before anything is allocated for them.
func TestDecodeHugeLengths(t *testing.T) {
	huge := binary.AppendUvarint(nil, 1<<31) // a compact length of 2^31-1
	cases := map[string][]byte{
		// ErrorMessage claims 2^31-1 bytes.
		"heartbeat string": append(append([]byte{0, 0, 0, 0, 0, 0}, huge...), 'x'),
		// Assignment array of 2^31-1 topics.
		"heartbeat array": append(append([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, huge...), 0),
		// A varint of 6 bytes.
		"varint overflow": {0, 0, 0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
		// Tagged fields: 2^31 of them.
		"tag count": append([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff}, huge...),
	}
	for name, b := range cases {
		allocs := testing.AllocsPerRun(10, func() {
			_, err := DecodeHeartbeatResponse(b)
			require.ErrorIs(t, err, ErrMalformed, name)
		})
		require.Less(t, allocs, 20.0, name)
	}
	var oc []byte
	oc = append(oc, 0, 0, 0, 0)
	oc = append(oc, huge...)
	_, err := DecodeOffsetCommitResponse(oc)
	require.ErrorIs(t, err, ErrMalformed)
	_, _, err = DecodeApiVersionsResponse([]byte{0, 0, 0x7f, 0xff, 0xff, 0xff})
	require.ErrorIs(t, err, ErrMalformed)
	_, _, err = DecodeApiVersionsResponse([]byte{0, 0, 0xff, 0xff, 0xff, 0xf0})
	require.ErrorIs(t, err, ErrMalformed)
}

// TestReadResponseRefusesHugeSize: an answer claiming more than
// MaxResponseSize is refused before its body is read or allocated.
func TestReadResponseRefusesHugeSize(t *testing.T) {
	for _, size := range []uint32{MaxResponseSize + 1, 1 << 31, 0xffffffff, 0, 3} {
		b := binary.BigEndian.AppendUint32(nil, size)
		_, err := readResponse(bytes.NewReader(b), 1, true)
		require.ErrorIs(t, err, ErrMalformed, "size %d", size)
	}
	b := binary.BigEndian.AppendUint32(nil, 5)
	b = append(b, 0, 0, 0, 9, 0)
	_, err := readResponse(bytes.NewReader(b), 1, true)
	require.ErrorIs(t, err, ErrMalformed, "wrong correlation id")
}

// TestConnExchange runs Dial, a heartbeat and a commit against a scripted
// peer over a pipe: the frames, headers and correlation ids.
func TestConnExchange(t *testing.T) {
	client, server := net.Pipe()
	done := make(chan error, 1)
	go func() {
		defer server.Close()
		done <- func() error {
			for i, flexible := range []bool{false, true, true} {
				var size [4]byte
				if _, err := readFull(server, size[:]); err != nil {
					return err
				}
				frame := make([]byte, binary.BigEndian.Uint32(size[:]))
				if _, err := readFull(server, frame); err != nil {
					return err
				}
				d := &decoder{b: frame, what: "header"}
				key, ver, corr := d.int16(""), d.int16(""), d.int32("")
				if id := d.int16String(""); id != "cid" {
					return errors.New("client id " + id)
				}
				if flexible {
					d.skipTags("")
				}
				var body []byte
				switch i {
				case 0:
					if key != APIKeyApiVersions || ver != 0 {
						return errors.New("first request is not ApiVersions v0")
					}
					body = EncodeApiVersionsResponse(0, map[int16]VersionRange{68: {0, 1}})
				case 1:
					req, err := DecodeHeartbeatRequest(frame[d.off:], ver)
					if err != nil || key != APIKeyConsumerGroupHeartbeat || req.GroupID != "g" {
						return errors.New("bad heartbeat")
					}
					body = (&HeartbeatResponse{MemberEpoch: 1, HeartbeatIntervalMs: 5}).Encode()
				case 2:
					if key != APIKeyOffsetCommit || ver != OffsetCommitVersion {
						return errors.New("bad commit")
					}
					body = (&OffsetCommitResponse{}).Encode()
				}
				out := binary.BigEndian.AppendUint32(nil, 0)
				out = binary.BigEndian.AppendUint32(out, uint32(corr))
				if flexible {
					out = append(out, 0)
				}
				out = append(out, body...)
				binary.BigEndian.PutUint32(out, uint32(len(out)-4))
				if _, err := server.Write(out); err != nil {
					return err
				}
			}
			return nil
		}()
	}()
	ctx := context.Background()
	c, err := Dial(ctx, pipeDialer{client}, "pipe", "cid", 5*time.Second)
	require.NoError(t, err)
	defer c.Close()
	v, ok := c.Versions(APIKeyConsumerGroupHeartbeat)
	require.True(t, ok)
	require.Equal(t, VersionRange{0, 1}, v)
	resp, err := c.Heartbeat(ctx, &HeartbeatRequest{GroupID: "g", MemberID: "m"}, 1)
	require.NoError(t, err)
	require.Equal(t, int32(1), resp.MemberEpoch)
	_, err = c.OffsetCommit(ctx, &OffsetCommitRequest{GroupID: "g"})
	require.NoError(t, err)
	require.NoError(t, <-done)
	// The peer is gone: the next request fails and the Conn stays broken.
	_, err = c.Heartbeat(ctx, &HeartbeatRequest{GroupID: "g"}, 1)
	require.Error(t, err)
	_, err = c.Heartbeat(ctx, &HeartbeatRequest{GroupID: "g"}, 1)
	require.ErrorIs(t, err, ErrConnClosed)
}

// TestConnCancel: a cancelled context ends a request waiting for its
// answer at once.
func TestConnCancel(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	c := &Conn{addr: "pipe", clientID: "c", timeout: time.Minute, c: client}
	defer c.Close()
	go func() { _, _ = readFull(server, make([]byte, 1<<10)) }()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Heartbeat(ctx, &HeartbeatRequest{GroupID: "g"}, 1)
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(start), 10*time.Second)
}

type pipeDialer struct{ c net.Conn }

func (p pipeDialer) Dial(string, string) (net.Conn, error) { return p.c, nil }

func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
