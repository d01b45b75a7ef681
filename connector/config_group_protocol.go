package connector

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zkconsumer/zkconsumer/internal/javaregex"
	"github.com/zkconsumer/zkconsumer/internal/kafkagroup"
	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
)

// Values accepted by Config.GroupProtocol (group.protocol).
const (
	// GroupProtocolClassic is Kafka's classic group protocol (JoinGroup,
	// SyncGroup, Heartbeat): the default.
	GroupProtocolClassic = "classic"
	// GroupProtocolConsumer is KIP-848's consumer group protocol
	// (ConsumerGroupHeartbeat), Kafka 4.0 and later: the broker assigns
	// (group.remote.assignor), members converge by giving up revoked
	// partitions first. With it, session.timeout.ms and
	// heartbeat.interval.ms are the broker's (group.consumer.*): the
	// member heartbeats at the interval the broker gives, and takes
	// session.timeout.ms only as what it assumes of the broker's session
	// timeout for its lease (keep it at most the broker's);
	// partition.assignment.strategy is ignored; TLS and SASL work as
	// with the classic protocol. CreateMessageStreamsByFilter takes a whitelist, which the
	// broker evaluates itself, with RE2/J rather than java.util.regex: the
	// member sends the whitelist translated to RE2/J's syntax with the
	// same meaning (ConsumerGroupHeartbeat version 1, Kafka 4.0), and the
	// broker assigns the partitions of every topic it matches, topics
	// created later included. A whitelist that uses a construct RE2/J
	// lacks or reads differently, a blacklist, and (with
	// exclude.internal.topics, the default) a whitelist matching one of
	// Kafka's internal topics are refused with a ConfigError naming what
	// the broker would do with it (see CreateMessageStreamsByFilter).
	GroupProtocolConsumer = "consumer"
)

// Property keys of the group protocol.
const (
	keyGroupProtocol       = "group.protocol"
	keyGroupRemoteAssignor = "group.remote.assignor"
)

func init() {
	properties = append(properties,
		stringProp(keyGroupProtocol, func(c *Config) *string { return &c.GroupProtocol }, false),
		stringProp(keyGroupRemoteAssignor, func(c *Config) *string { return &c.GroupRemoteAssignor }, true),
	)
	kafkaOnlyKeys = append(kafkaOnlyKeys, keyGroupProtocol, keyGroupRemoteAssignor)
}

// consumerProtocol reports whether the member speaks KIP-848's protocol.
func (c *Config) consumerProtocol() bool {
	return c.kafkaMode() && strings.ToLower(c.GroupProtocol) == GroupProtocolConsumer
}

// validateGroupProtocol checks group.protocol and group.remote.assignor
// (Kafka mode).
func (c *Config) validateGroupProtocol(v *validator) {
	if c.GroupProtocol == "" {
		c.GroupProtocol = GroupProtocolClassic
	}
	c.GroupProtocol = strings.ToLower(c.GroupProtocol)
	if !v.oneOf(keyGroupProtocol, c.GroupProtocol, GroupProtocolClassic, GroupProtocolConsumer) {
		return
	}
	if c.GroupRemoteAssignor == "" {
		return
	}
	if c.GroupProtocol != GroupProtocolConsumer {
		v.fail(keyGroupRemoteAssignor, c.GroupRemoteAssignor, "only applies with "+keyGroupProtocol+"="+GroupProtocolConsumer)
		return
	}
	v.oneOf(keyGroupRemoteAssignor, c.GroupRemoteAssignor, kafkagroup.RemoteAssignorUniform, kafkagroup.RemoteAssignorRange)
}

// newMember returns the group member of kc's subscription for the
// configured group.protocol.
func (k *kafkaGroup) newMember(kc kafkagroup.Config) (*kafkagroup.Member, error) {
	cfg := k.c.cfg
	if cfg.consumerProtocol() {
		if kc.Filter != nil {
			regex, err := brokerTopicRegex(&cfg, kc.Filter)
			if err != nil {
				return nil, err
			}
			kc.Filter, kc.TopicRegex = nil, regex
		}
		kc.Protocol, kc.Assignors, kc.RemoteAssignor = kafkagroup.ProtocolConsumer, nil, cfg.GroupRemoteAssignor
	}
	return kafkagroup.New(kc)
}

// brokerTopicRegex returns the regex a KIP-848 member sends for filter
// (SubscribedTopicRegex), which the broker evaluates with RE2/J, or a
// *ConfigError when the broker cannot be given the filter's meaning
// (topicfilter.Filter.BrokerRegex).
func brokerTopicRegex(cfg *Config, filter *topicfilter.Filter) (string, error) {
	regex, err := filter.BrokerRegex(cfg.ExcludeInternalTopics)
	if err != nil {
		return "", brokerRegexRefused(cfg, err, false)
	}
	return regex, nil
}

// brokerRegexRefused turns a topic filter refused in KIP-848 mode (a
// *javaregex.Error) into a *ConfigError that says why: the broker,
// not the member, evaluates the regex, and with RE2/J, which reads regexes
// as Go's regexp does. at tells whether the error names a place in the
// regex (a construct of its syntax). Other errors are returned as they
// are.
func brokerRegexRefused(cfg *Config, err error, at bool) error {
	var re *javaregex.Error
	if !errors.As(err, &re) {
		return err
	}
	where := ""
	if at {
		where = fmt.Sprintf(" at index %d", re.Index)
	}
	return &ConfigError{Key: keyGroupProtocol, Value: cfg.GroupProtocol,
		Reason: fmt.Sprintf("topic filter %q: %s%s: %s; with %s=%s the broker evaluates the filter itself, with RE2/J (com.google.re2j, Go's regexp syntax), not java.util.regex: subscribe with a whitelist RE2/J reads as Java does, or use %s=%s",
			re.Regex, re.Construct, where, re.Reason, keyGroupProtocol, GroupProtocolConsumer, keyGroupProtocol, GroupProtocolClassic)}
}
