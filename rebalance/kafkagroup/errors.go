package kafkagroup

import "errors"

// Causes that end a Generation (see the package documentation), and errors
// of Join and Commit.
var (
	// ErrRebalanceStarted: the group is rebalancing; stop, commit, Join.
	ErrRebalanceStarted = errors.New("kafkagroup: the group is rebalancing")
	// ErrMembershipLost: the coordinator no longer counts this member in
	// the generation; its partitions may be owned by others already.
	ErrMembershipLost = errors.New("kafkagroup: group membership lost")
	// ErrMemberClosed: Close was called.
	ErrMemberClosed = errors.New("kafkagroup: member closed")
	// ErrFatal wraps errors after which the member cannot rejoin:
	// FENCED_INSTANCE_ID (another instance with the same group.instance.id
	// joined), GROUP_AUTHORIZATION_FAILED, an inconsistent protocol, an
	// invalid session timeout, a full group, and the like; and connections
	// that the brokers refused to authenticate or whose TLS handshake
	// failed on the certificates (wrong SASL credentials, an untrusted or
	// mismatched certificate: see secure.ErrAuthentication), whose error
	// names the setting to fix.
	ErrFatal = errors.New("kafkagroup: fatal group error")
	// ErrCommitFenced: the coordinator refused a commit because the
	// committing generation is no longer current (ILLEGAL_GENERATION,
	// UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS). The
	// Kafka error is wrapped as well. The generation has ended by then:
	// with an ErrFatal error for FENCED_INSTANCE_ID, ErrMembershipLost for
	// UNKNOWN_MEMBER_ID and ILLEGAL_GENERATION, ErrRebalanceStarted for
	// REBALANCE_IN_PROGRESS.
	ErrCommitFenced = errors.New("kafkagroup: commit refused: the generation is no longer current")
	// ErrJoinInProgress: Join was called while another Join is running.
	ErrJoinInProgress = errors.New("kafkagroup: Join already in progress")
	// ErrTopicAuthorizationFailed is wrapped, with sarama's
	// ErrTopicAuthorizationFailed, by the errors reported
	// (Config.OnError) for subscribed topics whose metadata the brokers
	// refuse to this member (TOPIC_AUTHORIZATION_FAILED): the errors name
	// them, and they are left out of the assignment until access is
	// granted.
	ErrTopicAuthorizationFailed = errors.New("kafkagroup: not authorized to describe topics")
	// ErrStaticMembershipUnsupported: group.instance.id is set but the
	// coordinator does not speak JoinGroup v5 (Kafka 2.3 or later).
	ErrStaticMembershipUnsupported = errors.New("kafkagroup: the coordinator does not support static membership (group.instance.id)")
)
