package kip848

import "context"

// APIKeyJoinGroup is JoinGroup's API key.
const APIKeyJoinGroup = 11

// JoinGroupVersion is the JoinGroup version of this package: 9, the first
// whose response says SkipAssignment (KIP-814). sarama stops at 8.
const JoinGroupVersion = 9

// JoinGroupProtocol is one assignor a joining member offers, with its
// subscription metadata (Java's ConsumerProtocol encoding, done by the
// caller).
type JoinGroupProtocol struct {
	Name     string
	Metadata []byte
}

// JoinGroupRequest is a JoinGroup request, version 9.
type JoinGroupRequest struct {
	GroupID            string
	SessionTimeoutMs   int32
	RebalanceTimeoutMs int32
	// MemberID is "" for a member that joins for the first time.
	MemberID string
	// GroupInstanceID is group.instance.id; nil for a dynamic member.
	GroupInstanceID *string
	ProtocolType    string
	Protocols       []JoinGroupProtocol
	// Reason is why the member (re)joins, shown in the broker's log; nil
	// for none.
	Reason *string
}

// Encode returns the request's body at JoinGroupVersion.
func (r *JoinGroupRequest) Encode() []byte {
	var e encoder
	e.compactString(r.GroupID)
	e.int32(r.SessionTimeoutMs)
	e.int32(r.RebalanceTimeoutMs)
	e.compactString(r.MemberID)
	e.compactNullableString(r.GroupInstanceID)
	e.compactString(r.ProtocolType)
	e.compactArrayLen(len(r.Protocols))
	for _, p := range r.Protocols {
		e.compactString(p.Name)
		e.compactBytes(p.Metadata)
		e.emptyTags()
	}
	e.compactNullableString(r.Reason)
	e.emptyTags()
	return e.b
}

// DecodeJoinGroupRequest decodes a version 9 request body (tests, and the
// fuzzing of the decoders).
func DecodeJoinGroupRequest(b []byte) (*JoinGroupRequest, error) {
	d := &decoder{b: b, what: "JoinGroup request"}
	r := &JoinGroupRequest{}
	r.GroupID = d.compactString("GroupId")
	r.SessionTimeoutMs = d.int32("SessionTimeoutMs")
	r.RebalanceTimeoutMs = d.int32("RebalanceTimeoutMs")
	r.MemberID = d.compactString("MemberId")
	r.GroupInstanceID = d.compactNullableString("GroupInstanceId")
	r.ProtocolType = d.compactString("ProtocolType")
	// Each protocol is at least a name length, a bytes length, a tag count.
	if n := d.compactLen("Protocols", 3); n >= 0 {
		r.Protocols = make([]JoinGroupProtocol, 0, n)
		for range n {
			p := JoinGroupProtocol{Name: d.compactString("Protocols.Name"), Metadata: d.compactBytes("Protocols.Metadata")}
			d.skipTags("Protocols")
			if d.err != nil {
				break
			}
			r.Protocols = append(r.Protocols, p)
		}
	} else if d.err == nil {
		d.fail("Protocols: null where an array is required")
	}
	r.Reason = d.compactNullableString("Reason")
	d.skipTags("request")
	if err := d.end(); err != nil {
		return nil, err
	}
	return r, nil
}

// JoinGroupMember is a member of the group as the coordinator tells the
// leader: its id, group.instance.id and subscription metadata.
type JoinGroupMember struct {
	MemberID        string
	GroupInstanceID *string
	Metadata        []byte
}

// JoinGroupResponse is a JoinGroup response, version 9.
type JoinGroupResponse struct {
	ThrottleTimeMs int32
	ErrorCode      int16
	GenerationID   int32
	ProtocolType   *string
	// ProtocolName is the assignor the coordinator chose.
	ProtocolName *string
	Leader       string
	// SkipAssignment (KIP-814) tells a leader that the coordinator keeps
	// the group's current assignment: it must not compute one, but it is
	// the leader and must watch the group's metadata as a leader does.
	// The coordinator sets it for a static leader that rejoined a stable
	// group (a restarted process) without a rebalance.
	SkipAssignment bool
	MemberID       string
	// Members is every member's subscription, for the leader only.
	Members []JoinGroupMember
}

// Encode returns the response's body; the coordinator sends responses,
// tests encode them.
func (r *JoinGroupResponse) Encode() []byte {
	var e encoder
	e.int32(r.ThrottleTimeMs)
	e.int16(r.ErrorCode)
	e.int32(r.GenerationID)
	e.compactNullableString(r.ProtocolType)
	e.compactNullableString(r.ProtocolName)
	e.compactString(r.Leader)
	e.bool(r.SkipAssignment)
	e.compactString(r.MemberID)
	e.compactArrayLen(len(r.Members))
	for _, m := range r.Members {
		e.compactString(m.MemberID)
		e.compactNullableString(m.GroupInstanceID)
		e.compactBytes(m.Metadata)
		e.emptyTags()
	}
	e.emptyTags()
	return e.b
}

// DecodeJoinGroupResponse decodes a version 9 response body.
func DecodeJoinGroupResponse(b []byte) (*JoinGroupResponse, error) {
	d := &decoder{b: b, what: "JoinGroup response"}
	r := &JoinGroupResponse{}
	r.ThrottleTimeMs = d.int32("ThrottleTimeMs")
	r.ErrorCode = d.int16("ErrorCode")
	r.GenerationID = d.int32("GenerationId")
	r.ProtocolType = d.compactNullableString("ProtocolType")
	r.ProtocolName = d.compactNullableString("ProtocolName")
	r.Leader = d.compactString("Leader")
	r.SkipAssignment = d.bool("SkipAssignment")
	r.MemberID = d.compactString("MemberId")
	// Each member is at least an id length, an instance id length, a
	// bytes length and a tag count.
	if n := d.compactLen("Members", 4); n >= 0 {
		r.Members = make([]JoinGroupMember, 0, n)
		for range n {
			m := JoinGroupMember{MemberID: d.compactString("Members.MemberId"),
				GroupInstanceID: d.compactNullableString("Members.GroupInstanceId"),
				Metadata:        d.compactBytes("Members.Metadata")}
			d.skipTags("Members")
			if d.err != nil {
				break
			}
			r.Members = append(r.Members, m)
		}
	} else if d.err == nil {
		d.fail("Members: null where an array is required")
	}
	d.skipTags("response")
	if err := d.end(); err != nil {
		return nil, err
	}
	return r, nil
}

// JoinGroup sends a JoinGroup at JoinGroupVersion and returns the answer.
// The coordinator holds it until the group's rebalance completes: give the
// Conn a timeout of the rebalance timeout and more.
func (c *Conn) JoinGroup(ctx context.Context, req *JoinGroupRequest) (*JoinGroupResponse, error) {
	resp, err := c.roundTrip(ctx, APIKeyJoinGroup, JoinGroupVersion, req.Encode(), true)
	if err != nil {
		return nil, err
	}
	return DecodeJoinGroupResponse(resp)
}
