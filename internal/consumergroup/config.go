package consumergroup

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/IBM/sarama"
)

// Server-side assignors of Kafka 4.x (group.remote.assignor).
const (
	AssignorUniform = "uniform"
	AssignorRange   = "range"
)

// Config configures a Member. Zero fields take the defaults of Kafka's
// Java consumer named in each field's documentation.
type Config struct {
	// Brokers is bootstrap.servers: host:port of some brokers.
	Brokers []string
	// Group is group.id.
	Group string
	// InstanceID is group.instance.id (static membership); "" for a
	// dynamic member. A static member leaves with epoch -2 on Close: the
	// coordinator keeps its partitions for it until the group's session
	// timeout, and gives them back when an instance with the same id
	// joins again. While a live instance holds the id, another one is
	// refused (UNRELEASED_INSTANCE_ID); Join retries that, reporting it.
	InstanceID string
	// Topics is the subscription by topic names; set it or TopicRegex.
	Topics []string
	// TopicRegex is the subscription by regex instead of Topics: sent as
	// ConsumerGroupHeartbeat's SubscribedTopicRegex (version 1, Kafka
	// 4.0 and later), which the coordinator compiles with RE2/J and
	// matches against the whole name of every topic of the cluster the
	// member may describe, internal topics included, again when topics
	// are created (rebalance.TopicFilter.BrokerRegex makes one of a
	// whitelist).
	TopicRegex string
	// RemoteAssignor is group.remote.assignor: the coordinator's
	// assignor, "uniform" or "range"; "" leaves the choice to the broker
	// (group.consumer.assignors, uniform by default).
	RemoteAssignor string
	// RackID is client.rack, sent to the coordinator; "" for none.
	RackID string
	// SessionTimeout is what this member assumes of the group's session
	// timeout until it has read the one the broker enforces, which in this
	// protocol the broker sets (group.consumer.session.timeout.ms, default
	// 45 s, or the group's own consumer.session.timeout.ms): each Join
	// reads it (DescribeConfigs of the group) and the lease lasts
	// LeaseFraction of min(that, RebalanceTimeout); a difference from
	// SessionTimeout is logged. Only when the broker does not tell (no
	// DESCRIBE_CONFIGS permission on the group) does the lease rest on
	// SessionTimeout: then set it no higher than the broker's. Default 45 s.
	SessionTimeout time.Duration
	// RebalanceTimeout is max.poll.interval.ms (default 5 min), sent as
	// the longest the coordinator waits for this member to give up a
	// revoked partition before fencing it.
	RebalanceTimeout time.Duration
	// RetryBackoff is retry.backoff.ms (default 100 ms).
	RetryBackoff time.Duration
	// RequestTimeout is request.timeout.ms (default 30 s) for each request.
	RequestTimeout time.Duration
	// ClientID is client.id (default "zkconsumer").
	ClientID string
	// Sarama, if set, is the base of the connection settings (dial
	// timeout, proxy dialer). It is copied, never modified.
	Sarama *sarama.Config
	// Secure, if set, is applied to the settings of every connection after
	// the member has set its own dialer, so that a TLS dialer wraps it.
	Secure func(*sarama.Config)
	// Logger receives the member's logs; nil discards them.
	Logger *slog.Logger
	// OnError, if set, is told about failures the member retries by
	// itself (see kafkagroup.Config.OnError): joins and heartbeats that
	// keep failing. It must return quickly without calling the member.
	OnError func(error)
}

func (cfg Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&cfg.SessionTimeout, 45*time.Second)
	def(&cfg.RebalanceTimeout, 5*time.Minute)
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
		errs = append(errs, errors.New("consumergroup: no brokers (bootstrap.servers)"))
	}
	if cfg.Group == "" {
		errs = append(errs, errors.New("consumergroup: empty group.id"))
	}
	switch {
	case len(cfg.Topics) == 0 && cfg.TopicRegex == "":
		errs = append(errs, errors.New("consumergroup: subscription without topics or a topic regex"))
	case len(cfg.Topics) > 0 && cfg.TopicRegex != "":
		errs = append(errs, errors.New("consumergroup: a subscription is either Topics or a TopicRegex, not both"))
	}
	if slices.Contains(cfg.Topics, "") {
		errs = append(errs, errors.New("consumergroup: subscription with an empty topic name"))
	}
	switch cfg.RemoteAssignor {
	case "", AssignorUniform, AssignorRange:
	default:
		errs = append(errs, fmt.Errorf("consumergroup: group.remote.assignor %q: Kafka's brokers offer %q and %q", cfg.RemoteAssignor, AssignorUniform, AssignorRange))
	}
	for name, d := range map[string]time.Duration{
		"session.timeout.ms": cfg.SessionTimeout, "max.poll.interval.ms (rebalance timeout)": cfg.RebalanceTimeout,
		"retry.backoff.ms": cfg.RetryBackoff, "request.timeout.ms": cfg.RequestTimeout,
	} {
		if d < time.Millisecond || d.Milliseconds() > 1<<31-1 {
			errs = append(errs, fmt.Errorf("consumergroup: %s %v: must be between 1 ms and 2^31-1 ms", name, d))
		}
	}
	return errors.Join(errs...)
}
