package consumergroup

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/grouperr"

	"github.com/zkconsumer/zkconsumer/rebalance/kafkagroup"
)

// The causes that end a Generation and the errors of Join and Commit are
// those of package kafkagroup, so that a caller handles both protocols
// alike.
var (
	// ErrRebalanceStarted ends a generation that was still running when
	// Join was called: the caller gave it up, and Join tells the
	// coordinator what the member owns now. (Assignment changes do not end
	// generations: see Generation.Updates.)
	ErrRebalanceStarted = kafkagroup.ErrRebalanceStarted
	// ErrMembershipLost: the coordinator fenced this member
	// (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID) or it had no successful
	// heartbeat for the session timeout; commit nothing, Join again.
	ErrMembershipLost = kafkagroup.ErrMembershipLost
	// ErrMemberClosed: Close was called.
	ErrMemberClosed = kafkagroup.ErrMemberClosed
	// ErrFatal wraps errors after which the member cannot go on.
	ErrFatal = kafkagroup.ErrFatal
	// ErrCommitFenced: the coordinator refused a commit because this
	// member's epoch is no longer current.
	ErrCommitFenced = kafkagroup.ErrCommitFenced
	// ErrJoinInProgress: Join was called while another Join runs.
	ErrJoinInProgress = kafkagroup.ErrJoinInProgress
)

// ErrUnsupported is wrapped (with ErrFatal) by the error of Join when the
// coordinator does not speak the consumer group protocol.
var ErrUnsupported = errors.New("consumergroup: the broker does not support group.protocol=consumer (KIP-848 needs Kafka 4.0 or later with the consumer rebalance protocol enabled); set group.protocol=classic")

// Kafka error codes of KIP-848 that sarama does not name (grouperr's).
const (
	codeFencedMemberEpoch    = int16(grouperr.FencedMemberEpoch)
	codeUnreleasedInstanceID = int16(grouperr.UnreleasedInstanceID)
	codeUnsupportedAssignor  = int16(grouperr.UnsupportedAssignor)
	codeStaleMemberEpoch     = int16(grouperr.StaleMemberEpoch)
)

// KafkaError is an error code of a ConsumerGroupHeartbeat or OffsetCommit
// answer, with the coordinator's message if it sent one.
type KafkaError struct {
	Code    int16
	Message string
}

// Error names the code and adds the coordinator's message.
func (e *KafkaError) Error() string {
	var name string
	switch e.Code {
	case codeFencedMemberEpoch:
		name = "FENCED_MEMBER_EPOCH: the member epoch is not the coordinator's"
	case codeUnreleasedInstanceID:
		name = "UNRELEASED_INSTANCE_ID: another live member holds this group.instance.id"
	case codeUnsupportedAssignor:
		name = "UNSUPPORTED_ASSIGNOR: the broker does not offer this group.remote.assignor"
	case codeStaleMemberEpoch:
		name = "STALE_MEMBER_EPOCH: the commit's member epoch is not the current one"
	default:
		name = sarama.KError(e.Code).Error()
	}
	if e.Message != "" {
		return fmt.Sprintf("%s (code %d): %s", name, e.Code, e.Message)
	}
	return fmt.Sprintf("%s (code %d)", name, e.Code)
}

// Unwrap gives the sarama.KError of the code, so that errors.Is matches
// sarama's named errors.
func (e *KafkaError) Unwrap() error { return sarama.KError(e.Code) }

// kafkaError returns nil for code 0, else a *KafkaError.
func kafkaError(code int16, msg *string) error {
	if code == 0 {
		return nil
	}
	e := &KafkaError{Code: code}
	if msg != nil {
		e.Message = *msg
	}
	return e
}

// errorClass is what the member does after an error code.
type errorClass int

const (
	classRetry  errorClass = iota // repeat, after RetryBackoff
	classMoved                    // find the coordinator again, repeat
	classFenced                   // drop the partitions, rejoin with epoch 0
	classFatal                    // give up
)

// classify sorts an error code of ConsumerGroupHeartbeat as Java's
// consumer does, with grouperr's classes: a moved coordinator, a code
// that passes (loading, UNRELEASED_INSTANCE_ID, STALE_MEMBER_EPOCH), a
// fenced epoch; anything else (GROUP_AUTHORIZATION_FAILED,
// INVALID_REQUEST, UNSUPPORTED_ASSIGNOR, GROUP_MAX_SIZE_REACHED,
// UNSUPPORTED_VERSION, ...) is fatal.
func classify(code int16) errorClass {
	kerr := sarama.KError(code)
	switch {
	case grouperr.CoordinatorMoved(kerr):
		return classMoved
	case grouperr.Retriable(kerr):
		return classRetry
	case grouperr.EpochFenced(kerr):
		return classFenced
	}
	return classFatal
}
