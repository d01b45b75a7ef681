package kafkagroup

import (
	"fmt"
	"maps"
	"slices"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/rebalance"
)

// subscriptionMetadata is this member's protocol metadata in JoinGroup:
// Java's ConsumerProtocol subscription, version 1 (topics, null user data,
// no owned partitions: like Java's consumer under the eager protocol, the
// member has given its partitions up before it rejoins).
func subscriptionMetadata(topics []string) *sarama.ConsumerGroupMemberMetadata {
	return &sarama.ConsumerGroupMemberMetadata{Version: 1, Topics: slices.Clone(topics)}
}

// decodeMembers reads every member's subscription from the leader's
// JoinGroup response. Java's decoder reads versions it does not know as
// its highest; so does sarama's.
func decodeMembers(resp *sarama.JoinGroupResponse) (map[string]rebalance.MemberSubscription, error) {
	metas, err := resp.GetMembers()
	if err != nil {
		return nil, fmt.Errorf("kafkagroup: undecodable member metadata: %w", err)
	}
	out := make(map[string]rebalance.MemberSubscription, len(resp.Members))
	for _, gm := range resp.Members {
		s := rebalance.MemberSubscription{Topics: metas[gm.MemberId].Topics}
		if gm.GroupInstanceId != nil {
			s.InstanceID = *gm.GroupInstanceId
		}
		out[gm.MemberId] = s
	}
	return out, nil
}

// decodeAssignment reads this member's assignment from a SyncGroup
// response: topic to sorted partitions, topics without partitions left
// out. An empty buffer (the leader assigned nothing) is an empty
// assignment.
func decodeAssignment(buf []byte) (map[string][]int32, error) {
	out := map[string][]int32{}
	if len(buf) == 0 {
		return out, nil
	}
	var a *sarama.ConsumerGroupMemberAssignment
	a, err := (&sarama.SyncGroupResponse{MemberAssignment: buf}).GetMemberAssignment()
	if err != nil {
		return nil, err
	}
	for _, topic := range slices.Sorted(maps.Keys(a.Topics)) {
		ps := slices.Clone(a.Topics[topic])
		slices.Sort(ps)
		if ps = slices.Compact(ps); len(ps) > 0 {
			out[topic] = ps
		}
	}
	return out, nil
}
