package connector

import (
	"errors"
	"fmt"

	"github.com/zkconsumer/zkconsumer/internal/fetch"
	"github.com/zkconsumer/zkconsumer/internal/javaregex"
	"github.com/zkconsumer/zkconsumer/internal/kafkagroup"
	"github.com/zkconsumer/zkconsumer/internal/secure"
	"github.com/zkconsumer/zkconsumer/internal/zkgroup"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/stream"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// Errors of the connector's lifecycle.
var (
	// ErrStreamsExist: CreateMessageStreams or CreateMessageStreamsByFilter
	// was already called on this connector (Kafka's
	// MessageStreamsExistException).
	ErrStreamsExist = errors.New("connector: message streams were already created for this connector")

	// ErrShutdown: the connector has been shut down. It is stream.ErrShutdown
	// itself, which the connector's streams return once shut down, so one
	// errors.Is(err, ErrShutdown) covers the connector's calls and its
	// streams' Next.
	ErrShutdown = stream.ErrShutdown

	// ErrNotJoined: the connector has not joined its group yet
	// (CreateMessageStreams has not been called), so it owns nothing.
	ErrNotJoined = errors.New("connector: not a member of the group yet (call CreateMessageStreams)")

	// ErrRebalanceInProgress: the member is between generations, having
	// released its partitions and not yet claimed the next ones, so it owns
	// nothing for the moment (Kafka's Java consumer has
	// RebalanceInProgressException). Try again once the rebalance is over,
	// or commit from the RebalanceListener, which runs while the partitions
	// are still owned.
	ErrRebalanceInProgress = errors.New("connector: rebalance in progress; no partition is owned right now")

	// ErrNotOwner: an explicit commit, a Pause or a Resume named a
	// partition this member does not own in its current generation.
	ErrNotOwner = errors.New("connector: partition not owned by this consumer")

	// ErrAutoCommit is wrapped, in both coordination modes, by the errors
	// reported on Errors when an automatic commit (auto.commit.enable)
	// fails, together with the cause: for example ErrCommitFenced in Kafka
	// mode, or the store's error. The cause is a *CommitError naming the
	// offsets the commit tried to write. The next automatic commit tries
	// again with the offsets consumed by then.
	ErrAutoCommit = errors.New("connector: auto-commit")
)

// Errors of the other packages that the connector returns, reports on
// Errors or wraps, re-exported so that an application matches them with
// errors.Is without importing the packages that define them. Each is the
// same value as the original.
var (
	// ErrRebalanceFailed: a rebalance still failed after
	// rebalance.max.retries attempts (ZooKeeper mode; Kafka's
	// ConsumerRebalanceFailedException). The member owns nothing and keeps
	// trying, after rebalance.backoff.ms and on every change in the group.
	ErrRebalanceFailed = zkgroup.ErrRebalanceFailed

	// ErrOwnershipLost: the member lost its partitions without handing
	// them over: its ZooKeeper session expired (ZooKeeper mode), or the
	// coordinator no longer counts it in the group (Kafka mode; wrapping
	// ErrMembershipLost). Others may own the partitions already; nothing
	// more of them is delivered or committed, and the member rejoins.
	ErrOwnershipLost = zkgroup.ErrOwnershipLost

	// ErrTopicMissing: a topic of a static subscription does not exist
	// (reported on Errors; its streams stay empty until it is created).
	ErrTopicMissing = zkgroup.ErrTopicMissing

	// ErrInconsistentStrategy: ZooKeeper mode, the group's members run
	// partition.assignment.strategy values that cannot share a group
	// (sticky with anything else, range with roundrobin). It is wrapped by
	// a *StrategyError, which names the members and their strategies:
	// reported on Errors, wrapped in ErrRebalanceFailed, by a member that
	// stays out of the group (and then in Assignment().Err), and by the
	// members that stay in, once, about a member they find registered and
	// leave out (one that registered at the same time as a conflicting
	// one; a member that finds the conflict first does not register).
	ErrInconsistentStrategy = zkgroup.ErrInconsistentStrategy

	// ErrConnectionTimeout: New could not connect to ZooKeeper within
	// zookeeper.connection.timeout.ms.
	ErrConnectionTimeout = zksession.ErrConnectionTimeout

	// ErrSessionExpired: ZooKeeper expired the member's session.
	ErrSessionExpired = zksession.ErrSessionExpired

	// ErrMembershipLost: in Kafka mode, the coordinator removed this
	// member (no heartbeat within session.timeout.ms) or does not know its
	// generation; wrapped together with ErrOwnershipLost.
	ErrMembershipLost = kafkagroup.ErrMembershipLost

	// ErrGroupFatal: in Kafka mode, an error the member cannot recover
	// from: another member with the same group.instance.id, a group
	// authorization failure, an inconsistent group protocol. The member
	// stops consuming; shut the connector down.
	ErrGroupFatal = kafkagroup.ErrFatal

	// ErrCommitFenced: in Kafka mode, the coordinator refused a commit
	// because the member's generation is no longer current.
	ErrCommitFenced = kafkagroup.ErrCommitFenced

	// ErrStaticMembershipUnsupported: in Kafka mode, group.instance.id is
	// set but the group coordinator is too old for static membership
	// (Kafka 2.3 and later have it); wrapped with ErrGroupFatal.
	ErrStaticMembershipUnsupported = kafkagroup.ErrStaticMembershipUnsupported

	// ErrAuthentication: a broker refused the connector's credentials or
	// certificate, or the TLS handshake failed (wrong SASL username or
	// password, a SASL mechanism the listener does not enable, a broker
	// certificate from an authority the trust store lacks or for another
	// host, a client certificate refused). The error names the setting to
	// fix. In Kafka mode it is fatal
	// (it also wraps ErrGroupFatal): CreateMessageStreams returns it, or,
	// later, it is reported on Errors and the member stops. In ZooKeeper
	// mode the fetchers report it on Errors and retry.
	ErrAuthentication = secure.ErrAuthentication

	// ErrTopicAuthorizationFailed: in Kafka mode, reported on Errors for
	// subscribed topics the brokers refuse to describe to this consumer
	// (TOPIC_AUTHORIZATION_FAILED), which the error names; they are left
	// out of the assignment until access is granted.
	ErrTopicAuthorizationFailed = kafkagroup.ErrTopicAuthorizationFailed

	// ErrNoLeader: a partition has no leader (a deleted or unauthorised
	// topic, or a cluster without a live replica); reported, inside a
	// *PartitionError, on Errors.
	ErrNoLeader = fetch.ErrNoLeader

	// ErrMessageTooLarge: a message does not fit in
	// fetch.message.max.bytes, which stops its partition; delivered
	// through the partition's stream inside a *PartitionError.
	ErrMessageTooLarge = stream.ErrMessageTooLarge

	// ErrCorruptMessage: fetched records that cannot be decoded, which
	// stop their partition; delivered like ErrMessageTooLarge.
	ErrCorruptMessage = stream.ErrCorruptMessage

	// ErrConsumerTimeout: a stream's Next waited consumer.timeout.ms for a
	// message; the stream stays usable.
	ErrConsumerTimeout = stream.ErrConsumerTimeout
)

// PartitionError is stream.PartitionError: an error that belongs to one
// partition, delivered by the stream that owns it and on Errors.
//
//	// PartitionError is the error KafkaStream.Next returns when fetching one
//	// partition of the stream failed. It names the partition; Err is what the
//	// fetcher reported (for example an error wrapping ErrMessageTooLarge or
//	// ErrCorruptMessage).
//	//
//	// Unlike Kafka's iterator, which fails for good on such an error, the
//	// stream carries on: the next call to Next returns the next message, so
//	// the other partitions of the stream keep flowing.
//	type PartitionError struct {
//		// Topic is the topic of the partition that failed.
//		Topic string
//		// Partition is the partition id.
//		Partition int32
//		// Err is the underlying error.
//		Err error
//	}
//
//	func (e *PartitionError) Error() string
//	    Error formats the error as "partition topic-partition: err".
//
//	func (e *PartitionError) Unwrap() error
//	    Unwrap returns Err, so errors.Is and errors.As see through the partition.
type PartitionError = stream.PartitionError

// RegexError is a topic filter's regex that Java's Pattern would refuse
// or that Go's regexp cannot give Java's meaning, returned by
// TopicFilter.Validate and CreateMessageStreamsByFilter.
type RegexError struct {
	// Regex is the regex after Kafka's munging (',' becomes '|', spaces
	// and surrounding quotes are removed).
	Regex string
	// Index is where the construct starts, in characters (code points)
	// from 0, as in Java's "near index".
	Index int
	// Construct names what was found, for example `class intersection "&&"`.
	Construct string
	// Reason tells why it cannot be used.
	Reason string
}

// Error returns "topic filter <regex>: <construct> at index <i>: <reason>".
func (e *RegexError) Error() string {
	return fmt.Sprintf("topic filter %q: %s at index %d: %s", e.Regex, e.Construct, e.Index, e.Reason)
}

// regexError turns the regex compiler's error into a *RegexError; other
// errors are returned as they are.
func regexError(err error) error {
	var re *javaregex.Error
	if !errors.As(err, &re) {
		return err
	}
	return &RegexError{Regex: re.Regex, Index: re.Index, Construct: re.Construct, Reason: re.Reason}
}

// ConflictError is a cause of ErrRebalanceFailed in ZooKeeper mode: a
// partition this member was assigned is still owned by another member's
// thread, which did not release it within the rebalance's backoff. The
// error names the partition, its owner and the owner node.
//
//	// ConflictError reports that a partition this member was assigned is still
//	// owned by another thread: its previous owner has not released it yet.
//	type ConflictError struct {
//		// Partition is the partition still owned, Owner the value of its
//		// owner node ("" if unreadable) and Path that node's path.
//		Partition TopicPartition
//		Owner string
//		Path string
//		// Has unexported fields.
//	}
//
//	func (e *ConflictError) Error() string
//	    Error names the partition, its owner and the owner node.
type ConflictError = zkgroup.ConflictError

// StrategyError says why a member stays out of its group (ZooKeeper mode):
// the members it names run partition.assignment.strategy values it cannot
// share the group with. It wraps ErrInconsistentStrategy.
//
//	// StrategyError says why a member stays out of its group (or, reported by
//	// a member that stays in, why another one is left out): members it cannot
//	// share the group with run other strategies.
//	//
//	// Every zkconsumer member records its strategy in its registration; Kafka's
//	// Scala consumer records none. Range and roundrobin members share a group
//	// with Scala members exactly as before; the sticky strategy shares a group
//	// with sticky members only. Who stays in is decided from the registrations
//	// alone, the same way by every member: a member that records no strategy
//	// cannot be told to leave, so it is always in and sticky members step out
//	// for it; otherwise the older registration wins (a sticky member that
//	// joins a range group stays out, and so does a range or roundrobin member
//	// that joins a sticky group, or a range member that joins a roundrobin
//	// one). A member that stays out owns nothing, deletes its registration (so
//	// that Scala members, which count every registration, do not assign it
//	// partitions), reports this error (wrapped in ErrRebalanceFailed), and
//	// watches the group: it joins once the members it conflicts with are gone.
//	type StrategyError struct {
//		// Group is the group; Member the member left out and Strategy its
//		// strategy.
//		Group, Member, Strategy string
//		// Conflicts are the members that keep it out, with their strategies.
//		Conflicts []MemberStrategy
//	}
//
//	func (e *StrategyError) Error() string
//	    Error names the members, their strategies and what to do.
//
//	func (e *StrategyError) Unwrap() error
//	    Unwrap returns ErrInconsistentStrategy.
type StrategyError = zkgroup.StrategyError

// MemberStrategy is a member of a group and the strategy its registration
// records ("" for none: Kafka's Scala consumer), in a StrategyError.
//
//	// MemberStrategy is a member of a group and the strategy its registration
//	// records ("" for none).
//	type MemberStrategy struct {
//		// ID is the member's consumer id, Strategy the
//		// partition.assignment.strategy its registration records.
//		ID, Strategy string
//	}
type MemberStrategy = zkgroup.MemberStrategy

// DecodeError is zkutil.DecodeError: a value read from ZooKeeper that
// does not decode, naming the znode.
//
//	// DecodeError reports a znode whose data could not be decoded. Every decoder
//	// in this package returns one, wrapping the cause, so that callers can log
//	// which node holds the garbage and decide whether to skip it.
//	type DecodeError struct {
//		// Path is the znode the data was read from.
//		Path string
//		// Err is the cause.
//		Err error
//	}
//
//	func (e *DecodeError) Error() string
//	    Error returns "bad data in znode <path>: <cause>".
//
//	func (e *DecodeError) Unwrap() error
//	    Unwrap returns the cause.
type DecodeError = zkutil.DecodeError

// TopicPartition is zkutil.TopicPartition: one partition of one topic,
// the key of CommitOffsetsMap, Pause and Resume.
//
//	// TopicPartition names one partition of one topic.
//	type TopicPartition struct {
//		// Topic and Partition name the partition.
//		Topic string
//		Partition int32
//	}
//
//	func (tp TopicPartition) String() string
//	    String formats the partition as Kafka 1.x does ("topic-3").
type TopicPartition = zkutil.TopicPartition
