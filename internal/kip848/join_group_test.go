package kip848

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestJoinGroupRequestGolden checks the version 9 layout byte by byte
// against the message definition: compact strings and bytes, the nullable
// instance id and reason, tags after each protocol and the request.
func TestJoinGroupRequestGolden(t *testing.T) {
	req := &JoinGroupRequest{GroupID: "g", SessionTimeoutMs: 45000, RebalanceTimeoutMs: 300000, MemberID: "",
		GroupInstanceID: ptr("i"), ProtocolType: "consumer",
		Protocols: []JoinGroupProtocol{{Name: "range", Metadata: []byte{0, 3}}}}
	var want []byte
	want = append(want, 2, 'g')
	want = append(want, 0, 0, 0xaf, 0xc8) // 45000
	want = append(want, 0, 4, 0x93, 0xe0) // 300000
	want = append(want, 1)                // MemberId ""
	want = append(want, 2, 'i')           // GroupInstanceId
	want = append(want, 9, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r')
	want = append(want, 2)                          // one protocol
	want = append(want, 6, 'r', 'a', 'n', 'g', 'e') // its name
	want = append(want, 3, 0, 3)                    // its metadata
	want = append(want, 0)                          // its tags
	want = append(want, 0)                          // Reason null
	want = append(want, 0)                          // request tags
	require.Equal(t, want, req.Encode())
}

// TestJoinGroupResponseGolden decodes a version 9 answer laid out by hand:
// the leader's, with SkipAssignment set and one member.
func TestJoinGroupResponseGolden(t *testing.T) {
	var b []byte
	b = append(b, 0, 0, 0, 0) // ThrottleTimeMs
	b = append(b, 0, 0)       // ErrorCode
	b = append(b, 0, 0, 0, 7) // GenerationId
	b = append(b, 0)          // ProtocolType null
	b = append(b, 6, 'r', 'a', 'n', 'g', 'e')
	b = append(b, 2, 'm')         // Leader
	b = append(b, 1)              // SkipAssignment
	b = append(b, 2, 'm')         // MemberId
	b = append(b, 2)              // one member
	b = append(b, 2, 'm', 2, 'i') // its id and instance id
	b = append(b, 2, 9)           // its metadata
	b = append(b, 0)              // its tags
	b = append(b, 1, 0, 0)        // response tags: one unknown, empty
	got, err := DecodeJoinGroupResponse(b)
	require.NoError(t, err)
	require.Equal(t, &JoinGroupResponse{GenerationID: 7, ProtocolName: ptr("range"), Leader: "m", SkipAssignment: true,
		MemberID: "m", Members: []JoinGroupMember{{MemberID: "m", GroupInstanceID: ptr("i"), Metadata: []byte{9}}}}, got)

	bad := bytes.Clone(b)
	bad[4+2+4+1+6+2] = 2 // SkipAssignment neither 0 nor 1
	_, err = DecodeJoinGroupResponse(bad)
	require.ErrorIs(t, err, ErrMalformed)
}

func TestJoinGroupRoundTrip(t *testing.T) {
	reqs := []*JoinGroupRequest{
		{GroupID: "group", SessionTimeoutMs: 10000, RebalanceTimeoutMs: 60000, MemberID: "m-1", ProtocolType: "consumer",
			Protocols: []JoinGroupProtocol{{Name: "range", Metadata: []byte{1, 2}}, {Name: "cooperative-sticky", Metadata: []byte{}}},
			Reason:    ptr("rebalance failed")},
		{GroupID: "g", MemberID: "", GroupInstanceID: ptr("i"), ProtocolType: "consumer", Protocols: []JoinGroupProtocol{}},
	}
	for _, req := range reqs {
		got, err := DecodeJoinGroupRequest(req.Encode())
		require.NoError(t, err)
		require.Equal(t, req, got)
	}
	resps := []*JoinGroupResponse{
		{GenerationID: 3, ProtocolType: ptr("consumer"), ProtocolName: ptr("range"), Leader: "a", MemberID: "b", Members: []JoinGroupMember{}},
		{ErrorCode: 79, GenerationID: -1, Leader: "", MemberID: "new-id", Members: []JoinGroupMember{}},
		{GenerationID: 9, Leader: "a", MemberID: "a", SkipAssignment: true,
			Members: []JoinGroupMember{{MemberID: "a", GroupInstanceID: ptr("x"), Metadata: []byte{0, 3, 0}}, {MemberID: "b", Metadata: []byte{}}}},
	}
	for _, resp := range resps {
		got, err := DecodeJoinGroupResponse(resp.Encode())
		require.NoError(t, err)
		require.Equal(t, resp, got)
	}
}
