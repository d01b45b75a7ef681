package connector

import (
	"errors"
	"fmt"

	"github.com/zkconsumer/zkconsumer/internal/javaregex"
	"github.com/zkconsumer/zkconsumer/internal/kafkagroup"
	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
)

// consumerProtocol reports whether the member speaks KIP-848's protocol.
func (c *Config) consumerProtocol() bool {
	return c.kafkaMode() && c.GroupProtocol == GroupProtocolConsumer
}

// validateGroupProtocol checks group.protocol and group.remote.assignor
// (Kafka mode).
func (c *Config) validateGroupProtocol(v *validator) {
	if !groupProtocolEnum.check(v, uint8(c.GroupProtocol)) || c.GroupRemoteAssignor == RemoteAssignorDefault {
		return
	}
	if !remoteAssignorEnum.check(v, uint8(c.GroupRemoteAssignor)) {
		return
	}
	if c.GroupProtocol != GroupProtocolConsumer {
		v.fail(keyGroupRemoteAssignor, c.GroupRemoteAssignor.String(), "only applies with "+keyGroupProtocol+"="+GroupProtocolConsumer.String())
	}
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
		kc.Protocol, kc.Assignors, kc.RemoteAssignor = kafkagroup.ProtocolConsumer, nil, cfg.GroupRemoteAssignor.String()
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
	return &ConfigError{Key: keyGroupProtocol, Value: cfg.GroupProtocol.String(),
		Reason: fmt.Sprintf("topic filter %q: %s%s: %s; with %s=%s the broker evaluates the filter itself, with RE2/J (com.google.re2j, Go's regexp syntax), not java.util.regex: subscribe with a whitelist RE2/J reads as Java does, or use %s=%s",
			re.Regex, re.Construct, where, re.Reason, keyGroupProtocol, GroupProtocolConsumer.String(), keyGroupProtocol, GroupProtocolClassic.String())}
}
