package kafkagroup

import (
	"fmt"
	"maps"
	"slices"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
)

// subscriptionVersion is the version of Java's ConsumerProtocol
// subscription this member sends, the one Kafka 3.9's consumer sends: 1
// added the owned partitions, 2 the generation id (KIP-792), 3 the rack id.
const subscriptionVersion = 3

// subscriptionMetadata is this member's protocol metadata in JoinGroup for
// the assignor named protocol, as Java's ConsumerCoordinator builds it:
// the subscribed topics; the partitions it owns (under the cooperative
// protocol, those it keeps delivering while it rejoins; none under the
// eager one, where they were given up before the join); the generation
// id of its current membership (-1 when it has none); no rack. Java's
// CooperativeStickyAssignor adds its user data: the generation of the
// member's last assignment, assignedGen (see
// cooperativeStickyUserData); the other assignors add none.
func subscriptionMetadata(protocol string, topics []string, owned map[string][]int32, generation, assignedGen int32) *sarama.ConsumerGroupMemberMetadata {
	meta := &sarama.ConsumerGroupMemberMetadata{Version: subscriptionVersion, Topics: slices.Clone(topics), GenerationID: generation}
	for _, topic := range slices.Sorted(maps.Keys(owned)) {
		if ps := owned[topic]; len(ps) > 0 {
			meta.OwnedPartitions = append(meta.OwnedPartitions, &sarama.OwnedPartition{Topic: topic, Partitions: slices.Sorted(slices.Values(ps))})
		}
	}
	if protocol == strategyname.CooperativeSticky {
		meta.UserData = cooperativeStickyUserData(assignedGen)
	}
	return meta
}

// decodeMembers reads every member's subscription from the leader's
// JoinGroup response: topics, group.instance.id, owned partitions and the
// generation the cooperative-sticky assignor attributes to it. Java's
// decoder reads versions it does not know as its highest; so does
// sarama's.
func decodeMembers(resp *sarama.JoinGroupResponse) (map[string]memberSubscription, error) {
	metas, err := resp.GetMembers()
	if err != nil {
		return nil, fmt.Errorf("undecodable member metadata: %w", err)
	}
	out := make(map[string]memberSubscription, len(resp.Members))
	for _, gm := range resp.Members {
		meta := metas[gm.MemberId]
		s := memberSubscription{Topics: meta.Topics,
			Generation: cooperativeStickyGeneration(meta.Version, meta.GenerationID, meta.UserData)}
		for _, op := range meta.OwnedPartitions {
			if s.Owned == nil {
				s.Owned = map[string][]int32{}
			}
			s.Owned[op.Topic] = append(s.Owned[op.Topic], op.Partitions...)
		}
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
