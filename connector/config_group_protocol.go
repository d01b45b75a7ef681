package connector

import (
	"strings"

	"github.com/zkconsumer/zkconsumer/internal/consumergroup"
	"github.com/zkconsumer/zkconsumer/rebalance/kafkagroup"
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
	// partition.assignment.strategy is ignored; subscriptions are topic
	// names (CreateMessageStreamsByFilter is refused). TLS and SASL work
	// as with the classic protocol.
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
	v.oneOf(keyGroupRemoteAssignor, c.GroupRemoteAssignor, consumergroup.AssignorUniform, consumergroup.AssignorRange)
}

// newMember returns the group member of kc's subscription for the
// configured group.protocol.
func (k *kafkaGroup) newMember(kc kafkagroup.Config) (kafkaMember, error) {
	cfg := k.c.cfg
	if !cfg.consumerProtocol() {
		m, err := kafkagroup.New(kc)
		if err != nil {
			return nil, err
		}
		return classicMember{m}, nil
	}
	if kc.Filter != nil {
		return nil, &ConfigError{Key: keyGroupProtocol, Value: cfg.GroupProtocol,
			Reason: "topic filter (wildcard) subscriptions are not supported with " + keyGroupProtocol + "=" + GroupProtocolConsumer + "; subscribe to topic names, or use " + GroupProtocolClassic}
	}
	m, err := consumergroup.New(consumergroup.Config{
		Brokers:          kc.Brokers,
		Group:            kc.Group,
		InstanceID:       kc.InstanceID,
		Topics:           kc.Topics,
		RemoteAssignor:   cfg.GroupRemoteAssignor,
		SessionTimeout:   kc.SessionTimeout,
		RebalanceTimeout: kc.RebalanceTimeout,
		RetryBackoff:     kc.RetryBackoff,
		RequestTimeout:   kc.RequestTimeout,
		ClientID:         kc.ClientID,
		Sarama:           kc.Sarama,
		Secure:           kc.Secure,
		Logger:           kc.Logger,
		OnError:          kc.OnError,
	})
	if err != nil {
		return nil, err
	}
	return consumerMember{m}, nil
}
