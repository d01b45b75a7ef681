package kafkagroup

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
)

// The group protocols (group.protocol).
const (
	// ProtocolClassic is Kafka's classic group protocol: JoinGroup and
	// SyncGroup, the leader member computes the assignment.
	ProtocolClassic = "classic"
	// ProtocolConsumer is KIP-848's consumer group protocol (Kafka 4.0
	// and later): the broker assigns, members converge by heartbeats.
	ProtocolConsumer = "consumer"
)

// The coordinator's assignors of the consumer protocol
// (group.remote.assignor).
const (
	RemoteAssignorUniform = "uniform"
	RemoteAssignorRange   = "range"
)

// Config configures a Member. Zero fields take the defaults of Kafka's Java
// consumer named in each field's documentation. Fields marked classic or
// consumer apply to that protocol only.
type Config struct {
	// Protocol is group.protocol: ProtocolClassic (the default) or
	// ProtocolConsumer.
	Protocol string
	// Brokers is bootstrap.servers: host:port of some brokers.
	Brokers []string
	// Group is group.id.
	Group string
	// InstanceID is group.instance.id (KIP-345, static membership); ""
	// for a dynamic member. A static member does not leave the group on
	// Close, as in Java: the coordinator keeps its partitions for
	// the session timeout so that a restart does not rebalance (consumer
	// protocol: it leaves with epoch -2, which asks for exactly that;
	// while a live instance holds the id, another one is refused,
	// UNRELEASED_INSTANCE_ID, which Join retries). A classic static member
	// that joins without a member id (a new process) may replace a live
	// instance with the same id, whose lease may still hold: its lease
	// holds only after Generation.HoldUntil, leaseFraction of
	// min(SessionTimeout, RebalanceTimeout) after that join. Give every
	// instance of one id the same SessionTimeout and RebalanceTimeout.
	InstanceID string
	// Topics is a fixed subscription.
	Topics []string
	// Filter is a wildcard subscription instead of Topics (classic): every
	// topic of the cluster it admits. New matches are noticed every
	// MetadataMaxAge.
	Filter *topicfilter.Filter
	// TopicRegex is the subscription by regex instead of Topics
	// (consumer): sent as ConsumerGroupHeartbeat's SubscribedTopicRegex
	// (version 1, Kafka 4.0 and later), which the coordinator compiles
	// with RE2/J and matches against the whole name of every topic of the
	// cluster the member may describe, internal topics included, again
	// when topics are created (topicfilter.Filter.BrokerRegex makes
	// one of a whitelist).
	TopicRegex string
	// RemoteAssignor is group.remote.assignor (consumer): the
	// coordinator's assignor, RemoteAssignorUniform or
	// RemoteAssignorRange; "" leaves the choice to the broker
	// (group.consumer.assignors, uniform by default).
	RemoteAssignor string
	// RackID is client.rack (consumer), sent to the coordinator; "" for
	// none.
	RackID string
	// ExcludeInternalTopics is exclude.internal.topics (with Filter only);
	// set it explicitly, Java's default is true.
	ExcludeInternalTopics bool
	// Assignors is partition.assignment.strategy (classic): assignor names in order
	// of preference, each "range", "roundrobin" or "cooperative-sticky".
	// Default ["range"]. The coordinator picks one that every member
	// lists; Java 3.x consumers list [range, cooperative-sticky] by
	// default, so "range" is the common one. As in Java, the member runs
	// the cooperative protocol (Generation.Cooperative) only when every
	// assignor listed supports it, i.e. with ["cooperative-sticky"]
	// alone; listing an eager one too (the first step of Kafka's rolling
	// upgrade to cooperative) keeps the member eager, whichever assignor
	// the coordinator picks.
	Assignors []string
	// SessionTimeout is session.timeout.ms (default 45 s): without a
	// heartbeat for this long the coordinator removes the member. Under
	// the consumer protocol the broker sets the session timeout itself
	// (group.consumer.session.timeout.ms, or the group's own
	// consumer.session.timeout.ms): each Join reads it (DescribeConfigs
	// of the group) and the lease follows it, logging a difference from
	// SessionTimeout; only when the broker does not tell (no
	// DESCRIBE_CONFIGS permission on the group) does the lease rest on
	// SessionTimeout, which must then be no higher than the broker's.
	SessionTimeout time.Duration
	// RebalanceTimeout is what Java sends as max.poll.interval.ms
	// (default 5 min): how long the coordinator waits for members to
	// rejoin, i.e. how long the caller may take to stop, commit and Join
	// after ErrRebalanceStarted.
	RebalanceTimeout time.Duration
	// HeartbeatInterval is heartbeat.interval.ms (classic; default 3 s;
	// under the consumer protocol the coordinator sets it). The member
	// heartbeats more often when it is longer than a quarter of
	// min(SessionTimeout, RebalanceTimeout), so that a member whose
	// heartbeats succeed always holds its lease (Generation.LeaseHeld).
	HeartbeatInterval time.Duration
	// MetadataMaxAge is metadata.max.age.ms (classic; default 5 min): how often the
	// member checks the partition counts of the group's topics (leader)
	// and the topics its wildcard matches, and rejoins on a change.
	MetadataMaxAge time.Duration
	// RetryBackoff is retry.backoff.ms (default 100 ms): the wait before
	// retrying after a coordinator error.
	RetryBackoff time.Duration
	// RequestTimeout is request.timeout.ms (default 30 s) for every
	// request but JoinGroup, which may take RebalanceTimeout more.
	RequestTimeout time.Duration
	// ClientID is client.id (default "zkconsumer").
	ClientID string
	// Sarama, if set, is the base of the connection settings (TLS, SASL,
	// dial timeout, Version at least 2.4.0). It is copied, never modified.
	Sarama *sarama.Config
	// Secure, if set, is applied to the settings of every connection after
	// the member has set its own dialer, so that a TLS dialer and SASL
	// (secure.Client.Apply) wrap it rather than being replaced by it.
	Secure func(*sarama.Config)
	// Logger receives the member's logs; nil discards them.
	Logger *slog.Logger
	// OnError, if set, is told about failures the member retries by
	// itself, so that a member that cannot join or stay in its group says
	// why: joins that keep failing (an unreachable bootstrap.servers or
	// coordinator, a coordinator that cannot be found), heartbeats that
	// keep failing (no message is handed out once the lease lapses),
	// metadata checks that fail, and subscribed topics the broker refuses
	// to describe (ErrTopicAuthorizationFailed). Each kind of failure is
	// reported once it has lasted a few seconds, then at most every 30
	// seconds while it lasts. Without OnError they are logged at WARN. It
	// is called from the member's goroutines and from Join, and must
	// return quickly without calling back into the member. Failures that
	// retrying cannot mend are not reported here: Join returns them
	// (ErrFatal).
	OnError func(error)

	// noJoinV9 makes the member send JoinGroup at most at version 5 with
	// sarama's encoding even to brokers that speak 9 (tests: what KIP-814
	// changes).
	noJoinV9 bool
}

// withDefaults returns cfg with zero fields set to their defaults.
func (cfg Config) withDefaults() Config {
	if cfg.Protocol == "" {
		cfg.Protocol = ProtocolClassic
	}
	if len(cfg.Assignors) == 0 && cfg.Protocol == ProtocolClassic {
		cfg.Assignors = []string{strategyname.Range}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&cfg.SessionTimeout, 45*time.Second)
	def(&cfg.RebalanceTimeout, 5*time.Minute)
	def(&cfg.HeartbeatInterval, 3*time.Second)
	def(&cfg.MetadataMaxAge, 5*time.Minute)
	def(&cfg.RetryBackoff, 100*time.Millisecond)
	def(&cfg.RequestTimeout, 30*time.Second)
	if cfg.ClientID == "" {
		cfg.ClientID = "zkconsumer"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// Validate reports every problem of cfg (after defaults).
func (cfg Config) Validate() error {
	cfg = cfg.withDefaults()
	var errs []error
	if len(cfg.Brokers) == 0 {
		errs = append(errs, errors.New("no brokers (bootstrap.servers)"))
	}
	if cfg.Group == "" {
		errs = append(errs, errors.New("empty group.id"))
	}
	subscriptions := 0
	for _, set := range []bool{len(cfg.Topics) > 0, cfg.Filter != nil, cfg.TopicRegex != ""} {
		if set {
			subscriptions++
		}
	}
	switch {
	case cfg.Protocol != ProtocolClassic && cfg.Protocol != ProtocolConsumer:
		errs = append(errs, fmt.Errorf("group.protocol %q: %q or %q", cfg.Protocol, ProtocolClassic, ProtocolConsumer))
	case subscriptions > 1:
		errs = append(errs, errors.New("a subscription is one of Topics, a Filter or a TopicRegex"))
	case subscriptions == 0:
		errs = append(errs, errors.New("subscription without topics"))
	case slices.Contains(cfg.Topics, ""):
		errs = append(errs, errors.New("subscription with an empty topic name"))
	case cfg.Protocol == ProtocolClassic && cfg.TopicRegex != "":
		errs = append(errs, errors.New("a TopicRegex subscription needs group.protocol=consumer; use a Filter"))
	case cfg.Protocol == ProtocolConsumer && cfg.Filter != nil:
		errs = append(errs, errors.New("a Filter subscription needs group.protocol=classic; use a TopicRegex"))
	}
	switch {
	case cfg.Protocol == ProtocolClassic && (cfg.RemoteAssignor != "" || cfg.RackID != ""):
		errs = append(errs, errors.New("group.remote.assignor and client.rack need group.protocol=consumer"))
	case cfg.Protocol == ProtocolConsumer && len(cfg.Assignors) > 0:
		errs = append(errs, errors.New("under group.protocol=consumer the broker assigns: set group.remote.assignor, not partition.assignment.strategy"))
	}
	switch cfg.RemoteAssignor {
	case "", RemoteAssignorUniform, RemoteAssignorRange:
	default:
		errs = append(errs, fmt.Errorf("group.remote.assignor %q: Kafka's brokers offer %q and %q", cfg.RemoteAssignor, RemoteAssignorUniform, RemoteAssignorRange))
	}
	seen := map[string]bool{}
	for _, name := range cfg.Assignors {
		if _, err := newGroupAssignor(name); err != nil {
			errs = append(errs, err)
		}
		if seen[name] {
			errs = append(errs, fmt.Errorf("assignor %q listed twice", name))
		}
		seen[name] = true
	}
	for name, d := range map[string]time.Duration{
		"session.timeout.ms": cfg.SessionTimeout, "max.poll.interval.ms (rebalance timeout)": cfg.RebalanceTimeout,
		"heartbeat.interval.ms": cfg.HeartbeatInterval, "metadata.max.age.ms": cfg.MetadataMaxAge,
		"retry.backoff.ms": cfg.RetryBackoff, "request.timeout.ms": cfg.RequestTimeout,
	} {
		if d < time.Millisecond || d.Milliseconds() > 1<<31-1 {
			errs = append(errs, fmt.Errorf("%s %v: must be between 1 ms and 2^31-1 ms", name, d))
		}
	}
	if cfg.Protocol == ProtocolClassic && cfg.HeartbeatInterval >= cfg.SessionTimeout {
		errs = append(errs, fmt.Errorf("heartbeat.interval.ms %v must be lower than session.timeout.ms %v",
			cfg.HeartbeatInterval, cfg.SessionTimeout))
	}
	if cfg.Sarama != nil && !cfg.Sarama.Version.IsAtLeast(sarama.V2_4_0_0) {
		errs = append(errs, fmt.Errorf("sarama Version %s: need at least 2.4.0 (the versions are negotiated with the broker)", cfg.Sarama.Version))
	}
	return errors.Join(errs...)
}
