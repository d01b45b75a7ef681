// Package grouperr sorts the error codes of Kafka's group coordinator
// (OffsetCommit, OffsetFetch, Heartbeat, JoinGroup, SyncGroup, and
// KIP-848's ConsumerGroupHeartbeat) the way Kafka's Java consumer does:
// which mean "look the coordinator up again and repeat", which mean
// "repeat", which mean "the coordinator no longer counts this generation
// or epoch". It is the one list every client of the coordinator uses: the
// member of either group protocol (internal/kafkagroup) and the
// out-of-group client (internal/coordinator).
package grouperr

import "github.com/IBM/sarama"

// Error codes of KIP-848's consumer group protocol that sarama does not
// name.
const (
	// FencedMemberEpoch (110): the member's epoch is not the
	// coordinator's; it must rejoin with epoch 0, owning nothing.
	FencedMemberEpoch sarama.KError = 110
	// UnreleasedInstanceID (111): another live member still holds the
	// group.instance.id; repeat later.
	UnreleasedInstanceID sarama.KError = 111
	// UnsupportedAssignor (112): the broker does not offer the
	// group.remote.assignor asked for.
	UnsupportedAssignor sarama.KError = 112
	// StaleMemberEpoch (113): a commit's epoch is an older one of this
	// member; repeat with the current one.
	StaleMemberEpoch sarama.KError = 113
)

// CoordinatorMoved reports the errors after which a client forgets the
// coordinator, looks it up again (FindCoordinator) and repeats the
// request: NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE. A lost
// connection to the coordinator is handled alike by the callers.
func CoordinatorMoved(kerr sarama.KError) bool {
	switch kerr {
	case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable:
		return true
	}
	return false
}

// CoordinatorSuspect reports REQUEST_TIMED_OUT: the coordinator took the
// request but its write to the offsets topic was not replicated in time
// (a replica stopped). It was the coordinator when it took the request and
// may still be (a coordinator that lost the group answers NOT_COORDINATOR),
// or it may be cut off and not know yet. A client looks the coordinator
// up again and repeats the request, and keeps its connections when the
// answer names the same broker: Java's consumer marks the coordinator
// unknown and drops them, which also cuts off the heartbeats that keep the
// member in its group while the offsets topic is slow.
func CoordinatorSuspect(kerr sarama.KError) bool { return kerr == sarama.ErrRequestTimedOut }

// Retriable reports the errors after which a request is repeated:
// CoordinatorMoved; COORDINATOR_LOAD_IN_PROGRESS (the coordinator is
// still loading the group; repeat to the same one); NETWORK_EXCEPTION
// (Java's code for a lost connection); and KIP-848's
// UNRELEASED_INSTANCE_ID and STALE_MEMBER_EPOCH, which pass.
func Retriable(kerr sarama.KError) bool {
	switch kerr {
	case sarama.ErrOffsetsLoadInProgress, sarama.ErrNetworkException, UnreleasedInstanceID, StaleMemberEpoch:
		return true
	}
	return CoordinatorMoved(kerr) || CoordinatorSuspect(kerr)
}

// Fenced reports the answers of a coordinator that no longer counts the
// request's generation (or KIP-848 epoch) and member: ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID (another instance with the same
// group.instance.id replaced this one), REBALANCE_IN_PROGRESS (to an
// OffsetCommit: the group formed a new generation) and
// FENCED_MEMBER_EPOCH. Repeating the request cannot succeed; Java's
// consumer stops there too.
func Fenced(kerr sarama.KError) bool {
	switch kerr {
	case sarama.ErrIllegalGeneration, sarama.ErrUnknownMemberId, sarama.ErrFencedInstancedId, sarama.ErrRebalanceInProgress,
		FencedMemberEpoch:
		return true
	}
	return false
}

// EpochFenced reports the answers to a KIP-848 ConsumerGroupHeartbeat
// after which the member rejoins with epoch 0, owning nothing:
// FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID (Fenced, of the codes that
// heartbeat answers).
func EpochFenced(kerr sarama.KError) bool {
	return kerr == FencedMemberEpoch || kerr == sarama.ErrUnknownMemberId
}
