package kip848

import (
	"errors"
	"fmt"
)

// APIKeyConsumerGroupHeartbeat is ConsumerGroupHeartbeat's API key.
const APIKeyConsumerGroupHeartbeat = 68

// Epochs with a meaning of their own in a ConsumerGroupHeartbeat request.
const (
	// EpochJoin joins the group (or rejoins after being fenced).
	EpochJoin int32 = 0
	// EpochLeave leaves the group.
	EpochLeave int32 = -1
	// EpochLeaveStatic leaves the group for now as a static member
	// (group.instance.id) that will come back: its partitions are kept
	// for it until its session times out.
	EpochLeaveStatic int32 = -2
)

// TopicPartitions is some partitions of one topic, named by topic id.
type TopicPartitions struct {
	TopicID    UUID
	Partitions []int32
}

// HeartbeatRequest is a ConsumerGroupHeartbeat request. Nil pointer and
// nil slice fields are sent as null, which tells the coordinator "not
// changed since the last heartbeat" (or "not used").
type HeartbeatRequest struct {
	GroupID     string
	MemberID    string
	MemberEpoch int32
	InstanceID  *string
	RackID      *string
	// RebalanceTimeoutMs is -1 when unchanged.
	RebalanceTimeoutMs   int32
	SubscribedTopicNames []string // nil: unchanged
	// SubscribedTopicRegex exists from version 1 on; Encode refuses it at
	// version 0.
	SubscribedTopicRegex *string
	ServerAssignor       *string
	// TopicPartitions is the partitions the member owns; nil: unchanged.
	// An empty non-nil slice says it owns none.
	TopicPartitions []TopicPartitions
}

// Encode returns the request's body at version (0 or 1).
func (r *HeartbeatRequest) Encode(version int16) ([]byte, error) {
	if version < 0 || version > 1 {
		return nil, fmt.Errorf("ConsumerGroupHeartbeat version %d: only 0 and 1 are known", version)
	}
	if version == 0 && r.SubscribedTopicRegex != nil {
		return nil, errors.New("ConsumerGroupHeartbeat version 0 has no SubscribedTopicRegex")
	}
	var e encoder
	e.compactString(r.GroupID)
	e.compactString(r.MemberID)
	e.int32(r.MemberEpoch)
	e.compactNullableString(r.InstanceID)
	e.compactNullableString(r.RackID)
	e.int32(r.RebalanceTimeoutMs)
	if r.SubscribedTopicNames == nil {
		e.compactArrayLen(-1)
	} else {
		e.compactArrayLen(len(r.SubscribedTopicNames))
		for _, t := range r.SubscribedTopicNames {
			e.compactString(t)
		}
	}
	if version >= 1 {
		e.compactNullableString(r.SubscribedTopicRegex)
	}
	e.compactNullableString(r.ServerAssignor)
	if r.TopicPartitions == nil {
		e.compactArrayLen(-1)
	} else {
		encodeTopicPartitions(&e, r.TopicPartitions)
	}
	e.emptyTags()
	return e.b, nil
}

func encodeTopicPartitions(e *encoder, tps []TopicPartitions) {
	e.compactArrayLen(len(tps))
	for _, tp := range tps {
		e.uuid(tp.TopicID)
		e.compactArrayLen(len(tp.Partitions))
		for _, p := range tp.Partitions {
			e.int32(p)
		}
		e.emptyTags()
	}
}

// DecodeHeartbeatRequest decodes a request body; the member never reads
// requests, tests do (round trips).
func DecodeHeartbeatRequest(b []byte, version int16) (*HeartbeatRequest, error) {
	d := &decoder{b: b, what: "ConsumerGroupHeartbeat request"}
	r := &HeartbeatRequest{}
	r.GroupID = d.compactString("GroupId")
	r.MemberID = d.compactString("MemberId")
	r.MemberEpoch = d.int32("MemberEpoch")
	r.InstanceID = d.compactNullableString("InstanceId")
	r.RackID = d.compactNullableString("RackId")
	r.RebalanceTimeoutMs = d.int32("RebalanceTimeoutMs")
	if n := d.compactLen("SubscribedTopicNames", 1); n >= 0 {
		r.SubscribedTopicNames = make([]string, 0, n)
		for range n {
			r.SubscribedTopicNames = append(r.SubscribedTopicNames, d.compactString("SubscribedTopicNames"))
		}
	}
	if version >= 1 {
		r.SubscribedTopicRegex = d.compactNullableString("SubscribedTopicRegex")
	}
	r.ServerAssignor = d.compactNullableString("ServerAssignor")
	r.TopicPartitions = decodeTopicPartitions(d, "TopicPartitions")
	d.skipTags("request")
	if err := d.end(); err != nil {
		return nil, err
	}
	return r, nil
}

// decodeTopicPartitions reads a nullable array of TopicPartitions (nil
// for null).
func decodeTopicPartitions(d *decoder, field string) []TopicPartitions {
	n := d.compactLen(field, 16+1+1) // a uuid, an array length, a tag count
	if n < 0 {
		return nil
	}
	out := make([]TopicPartitions, 0, n)
	for range n {
		var tp TopicPartitions
		tp.TopicID = d.uuid(field + ".TopicId")
		m := d.compactLen(field+".Partitions", 4)
		if m > 0 {
			tp.Partitions = make([]int32, 0, m)
			for range m {
				tp.Partitions = append(tp.Partitions, d.int32(field+".Partitions"))
			}
		} else if m == 0 {
			tp.Partitions = []int32{}
		}
		d.skipTags(field)
		if d.err != nil {
			return nil
		}
		out = append(out, tp)
	}
	return out
}

// HeartbeatResponse is a ConsumerGroupHeartbeat response (versions 0 and 1
// are alike).
type HeartbeatResponse struct {
	ThrottleTimeMs      int32
	ErrorCode           int16
	ErrorMessage        *string
	MemberID            *string
	MemberEpoch         int32
	HeartbeatIntervalMs int32
	// Assignment is nil when the coordinator sent none (unchanged), else
	// the partitions the member may own now (possibly none).
	Assignment []TopicPartitions
}

// Encode returns the response's body; the coordinator sends responses,
// tests encode them (round trips).
func (r *HeartbeatResponse) Encode() []byte {
	var e encoder
	e.int32(r.ThrottleTimeMs)
	e.int16(r.ErrorCode)
	e.compactNullableString(r.ErrorMessage)
	e.compactNullableString(r.MemberID)
	e.int32(r.MemberEpoch)
	e.int32(r.HeartbeatIntervalMs)
	if r.Assignment == nil {
		e.int8(-1)
	} else {
		e.int8(1)
		encodeTopicPartitions(&e, r.Assignment)
		e.emptyTags()
	}
	e.emptyTags()
	return e.b
}

// DecodeHeartbeatResponse decodes a response body (any version).
func DecodeHeartbeatResponse(b []byte) (*HeartbeatResponse, error) {
	d := &decoder{b: b, what: "ConsumerGroupHeartbeat response"}
	r := &HeartbeatResponse{}
	r.ThrottleTimeMs = d.int32("ThrottleTimeMs")
	r.ErrorCode = d.int16("ErrorCode")
	r.ErrorMessage = d.compactNullableString("ErrorMessage")
	r.MemberID = d.compactNullableString("MemberId")
	r.MemberEpoch = d.int32("MemberEpoch")
	r.HeartbeatIntervalMs = d.int32("HeartbeatIntervalMs")
	// A nullable struct: a presence byte, -1 for null, 1 for present.
	switch present := d.int8("Assignment presence"); {
	case d.err != nil:
	case present < 0:
	case present == 1:
		r.Assignment = decodeTopicPartitions(d, "Assignment.TopicPartitions")
		if r.Assignment == nil && d.err == nil {
			d.fail("Assignment.TopicPartitions: null where an array is required")
		}
		d.skipTags("Assignment")
	default:
		d.fail("Assignment presence byte %d", present)
	}
	d.skipTags("response")
	if err := d.end(); err != nil {
		return nil, err
	}
	return r, nil
}
