package kip848

// APIKeyOffsetCommit is OffsetCommit's API key.
const APIKeyOffsetCommit = 8

// OffsetCommitVersion is the OffsetCommit version this package encodes:
// 9, the first one a member of a consumer-protocol group may commit with
// (the coordinator refuses older versions from such a member). Its layout
// is version 8's; topics are named, not given by id (version 10 does
// that).
const OffsetCommitVersion = 9

// CommitPartition is one partition's offset to commit.
type CommitPartition struct {
	Partition int32
	Offset    int64
	// LeaderEpoch is -1 when unknown.
	LeaderEpoch int32
	Metadata    *string
}

// CommitTopic is one topic's offsets to commit.
type CommitTopic struct {
	Name       string
	Partitions []CommitPartition
}

// OffsetCommitRequest is an OffsetCommit request at OffsetCommitVersion.
type OffsetCommitRequest struct {
	GroupID string
	// MemberEpoch is the member's current epoch (the field is the classic
	// protocol's generation id).
	MemberEpoch     int32
	MemberID        string
	GroupInstanceID *string
	Topics          []CommitTopic
}

// Encode returns the request's body.
func (r *OffsetCommitRequest) Encode() []byte {
	var e encoder
	e.compactString(r.GroupID)
	e.int32(r.MemberEpoch)
	e.compactString(r.MemberID)
	e.compactNullableString(r.GroupInstanceID)
	e.compactArrayLen(len(r.Topics))
	for _, t := range r.Topics {
		e.compactString(t.Name)
		e.compactArrayLen(len(t.Partitions))
		for _, p := range t.Partitions {
			e.int32(p.Partition)
			e.int64(p.Offset)
			e.int32(p.LeaderEpoch)
			e.compactNullableString(p.Metadata)
			e.emptyTags()
		}
		e.emptyTags()
	}
	e.emptyTags()
	return e.b
}

// DecodeOffsetCommitRequest decodes a request body (tests' round trips).
func DecodeOffsetCommitRequest(b []byte) (*OffsetCommitRequest, error) {
	d := &decoder{b: b, what: "OffsetCommit request"}
	r := &OffsetCommitRequest{}
	r.GroupID = d.compactString("GroupId")
	r.MemberEpoch = d.int32("GenerationIdOrMemberEpoch")
	r.MemberID = d.compactString("MemberId")
	r.GroupInstanceID = d.compactNullableString("GroupInstanceId")
	n := d.compactLen("Topics", 3)
	for range max(n, 0) {
		t := CommitTopic{Name: d.compactString("Topics.Name")}
		m := d.compactLen("Topics.Partitions", 4+8+4+1+1)
		for range max(m, 0) {
			p := CommitPartition{Partition: d.int32("PartitionIndex"), Offset: d.int64("CommittedOffset"),
				LeaderEpoch: d.int32("CommittedLeaderEpoch"), Metadata: d.compactNullableString("CommittedMetadata")}
			d.skipTags("partition")
			if d.err != nil {
				return nil, d.err
			}
			t.Partitions = append(t.Partitions, p)
		}
		d.skipTags("topic")
		if d.err != nil {
			return nil, d.err
		}
		r.Topics = append(r.Topics, t)
	}
	d.skipTags("request")
	if err := d.end(); err != nil {
		return nil, err
	}
	return r, nil
}

// PartitionError is one partition's answer to an OffsetCommit.
type PartitionError struct {
	Partition int32
	ErrorCode int16
}

// TopicErrors is one topic's answers to an OffsetCommit.
type TopicErrors struct {
	Name       string
	Partitions []PartitionError
}

// OffsetCommitResponse is an OffsetCommit response at
// OffsetCommitVersion.
type OffsetCommitResponse struct {
	ThrottleTimeMs int32
	Topics         []TopicErrors
}

// Encode returns the response's body (tests' round trips).
func (r *OffsetCommitResponse) Encode() []byte {
	var e encoder
	e.int32(r.ThrottleTimeMs)
	e.compactArrayLen(len(r.Topics))
	for _, t := range r.Topics {
		e.compactString(t.Name)
		e.compactArrayLen(len(t.Partitions))
		for _, p := range t.Partitions {
			e.int32(p.Partition)
			e.int16(p.ErrorCode)
			e.emptyTags()
		}
		e.emptyTags()
	}
	e.emptyTags()
	return e.b
}

// DecodeOffsetCommitResponse decodes a response body.
func DecodeOffsetCommitResponse(b []byte) (*OffsetCommitResponse, error) {
	d := &decoder{b: b, what: "OffsetCommit response"}
	r := &OffsetCommitResponse{ThrottleTimeMs: d.int32("ThrottleTimeMs")}
	n := d.compactLen("Topics", 3)
	for range max(n, 0) {
		t := TopicErrors{Name: d.compactString("Topics.Name")}
		m := d.compactLen("Topics.Partitions", 4+2+1)
		for range max(m, 0) {
			p := PartitionError{Partition: d.int32("PartitionIndex"), ErrorCode: d.int16("ErrorCode")}
			d.skipTags("partition")
			if d.err != nil {
				return nil, d.err
			}
			t.Partitions = append(t.Partitions, p)
		}
		d.skipTags("topic")
		if d.err != nil {
			return nil, d.err
		}
		r.Topics = append(r.Topics, t)
	}
	d.skipTags("response")
	if err := d.end(); err != nil {
		return nil, err
	}
	return r, nil
}
