// Package grouperr sorts the error codes of Kafka's group coordinator
// (OffsetCommit, OffsetFetch, Heartbeat, JoinGroup, SyncGroup) the way
// Kafka's Java consumer does: which mean "look the coordinator up again
// and repeat", which mean "the coordinator no longer counts this
// generation". It is the one list both the Kafka-coordinated member
// (rebalance/kafkagroup) and the out-of-group offset client
// (internal/coordinator) use.
package grouperr

import "github.com/IBM/sarama"

// CoordinatorMoved reports the errors after which a client forgets the
// coordinator, looks it up again (FindCoordinator) and repeats the
// request: NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE and
// REQUEST_TIMED_OUT, as Java's consumer marks the coordinator unknown on
// each of them. A lost connection to the coordinator is handled alike by
// the callers.
func CoordinatorMoved(kerr sarama.KError) bool {
	switch kerr {
	case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable, sarama.ErrRequestTimedOut:
		return true
	}
	return false
}

// Retriable reports the errors after which a request is repeated:
// CoordinatorMoved, and COORDINATOR_LOAD_IN_PROGRESS (the coordinator is
// still loading the group; repeat to the same one).
func Retriable(kerr sarama.KError) bool {
	return CoordinatorMoved(kerr) || kerr == sarama.ErrOffsetsLoadInProgress
}

// Fenced reports the answers of a coordinator that no longer counts the
// request's generation and member: ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
// FENCED_INSTANCE_ID (another instance with the same group.instance.id
// replaced this one) and REBALANCE_IN_PROGRESS (to an OffsetCommit: the
// group formed a new generation). Repeating the request cannot succeed;
// Java's consumer stops there too.
func Fenced(kerr sarama.KError) bool {
	switch kerr {
	case sarama.ErrIllegalGeneration, sarama.ErrUnknownMemberId, sarama.ErrFencedInstancedId, sarama.ErrRebalanceInProgress:
		return true
	}
	return false
}
