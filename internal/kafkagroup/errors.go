package kafkagroup

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/grouperr"
)

// Causes that end a Generation (see the package documentation), and errors
// of Join and Commit.
var (
	// ErrRebalanceStarted: the group is rebalancing; stop, commit, Join.
	// Under group.protocol=consumer, where assignment changes do not end
	// generations (Generation.Updates), it ends only a generation that
	// was still running when Join was called: the caller gave it up.
	ErrRebalanceStarted = errors.New("the group is rebalancing")
	// ErrMembershipLost: the coordinator no longer counts this member in
	// the generation (or, under group.protocol=consumer, fenced its
	// epoch), or no heartbeat succeeded for the session timeout; its
	// partitions may be owned by others already.
	ErrMembershipLost = errors.New("group membership lost")
	// ErrMemberClosed: Close was called.
	ErrMemberClosed = errors.New("group member closed")
	// ErrFatal wraps errors after which the member cannot rejoin:
	// FENCED_INSTANCE_ID (another instance with the same group.instance.id
	// joined), GROUP_AUTHORIZATION_FAILED, an inconsistent protocol, an
	// invalid session timeout, a full group, and the like; and connections
	// that the brokers refused to authenticate or whose TLS handshake
	// failed on the certificates (wrong SASL credentials, an untrusted or
	// mismatched certificate: see secure.ErrAuthentication), whose error
	// names the setting to fix.
	ErrFatal = errors.New("fatal group error")
	// ErrCommitFenced: the coordinator refused a commit because the
	// committing generation is no longer current (ILLEGAL_GENERATION,
	// UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS). The
	// Kafka error is wrapped as well. The generation has ended by then:
	// with an ErrFatal error for FENCED_INSTANCE_ID, ErrMembershipLost for
	// UNKNOWN_MEMBER_ID and ILLEGAL_GENERATION, ErrRebalanceStarted for
	// REBALANCE_IN_PROGRESS.
	ErrCommitFenced = errors.New("commit refused: the generation is no longer current")
	// ErrJoinInProgress: Join was called while another Join is running.
	ErrJoinInProgress = errors.New("join already in progress")
	// ErrTopicAuthorizationFailed is wrapped, with sarama's
	// ErrTopicAuthorizationFailed, by the errors reported
	// (Config.OnError) for subscribed topics whose metadata the brokers
	// refuse to this member (TOPIC_AUTHORIZATION_FAILED): the errors name
	// them, and they are left out of the assignment until access is
	// granted.
	ErrTopicAuthorizationFailed = errors.New("not authorized to describe topics")
	// ErrStaticMembershipUnsupported: group.instance.id is set but the
	// coordinator does not speak JoinGroup v5 (Kafka 2.3 or later).
	ErrStaticMembershipUnsupported = errors.New("the coordinator does not support static membership (group.instance.id)")
)

// ErrUnsupported is wrapped (with ErrFatal) by the error of Join when the
// coordinator does not speak the consumer group protocol.
var ErrUnsupported = errors.New("the broker does not support group.protocol=consumer (KIP-848 needs Kafka 4.0 or later with the consumer rebalance protocol enabled); set group.protocol=classic")

// Kafka error codes of KIP-848 that sarama does not name (grouperr's).
const (
	codeFencedMemberEpoch    = int16(grouperr.FencedMemberEpoch)
	codeUnreleasedInstanceID = int16(grouperr.UnreleasedInstanceID)
	codeUnsupportedAssignor  = int16(grouperr.UnsupportedAssignor)
	codeStaleMemberEpoch     = int16(grouperr.StaleMemberEpoch)
)

// codeError is an error code of a ConsumerGroupHeartbeat or OffsetCommit
// answer of the consumer group protocol, with the coordinator's message if
// it sent one.
type codeError struct {
	Code    int16
	Message string
}

// Error names the code and adds the coordinator's message.
func (e *codeError) Error() string {
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
func (e *codeError) Unwrap() error { return sarama.KError(e.Code) }

// kafkaError returns nil for code 0, else a *codeError.
func kafkaError(code int16, msg *string) error {
	if code == 0 {
		return nil
	}
	e := &codeError{Code: code}
	if msg != nil {
		e.Message = *msg
	}
	return e
}
