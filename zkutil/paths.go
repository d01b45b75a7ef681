package zkutil

import "strconv"

// Roots of Kafka's ZooKeeper layout. Every path in this package is relative
// to the chroot of the ZooKeeper connection string; the session adds the
// chroot.
const (
	// ConsumersPath holds one child per consumer group (ZkUtils.ConsumersPath).
	ConsumersPath = "/consumers"
	// BrokerIDsPath holds one ephemeral child per live broker, named by its id.
	BrokerIDsPath = "/brokers/ids"
	// BrokerTopicsPath holds one child per topic with its replica assignment.
	BrokerTopicsPath = "/brokers/topics"
)

// GroupPath returns /consumers/<group>.
func GroupPath(group string) string {
	return ConsumersPath + "/" + group
}

// ConsumerIDsPath returns /consumers/<group>/ids, the parent of the group
// members' registrations (Scala's consumerRegistryDir).
func ConsumerIDsPath(group string) string {
	return GroupPath(group) + "/ids"
}

// ConsumerIDPath returns /consumers/<group>/ids/<consumerID>, the ephemeral
// registration of one member.
func ConsumerIDPath(group, consumerID string) string {
	return ConsumerIDsPath(group) + "/" + consumerID
}

// OwnersPath returns /consumers/<group>/owners (Scala's
// consumerGroupOwnersDir).
func OwnersPath(group string) string {
	return GroupPath(group) + "/owners"
}

// OwnersTopicPath returns /consumers/<group>/owners/<topic>.
func OwnersTopicPath(group, topic string) string {
	return OwnersPath(group) + "/" + topic
}

// OwnerPath returns /consumers/<group>/owners/<topic>/<partition>, the
// ephemeral node whose value is the owning ConsumerThreadID.
func OwnerPath(group, topic string, partition int32) string {
	return OwnersTopicPath(group, topic) + "/" + formatInt32(partition)
}

// OffsetsPath returns /consumers/<group>/offsets (Scala's
// consumerGroupOffsetsDir).
func OffsetsPath(group string) string {
	return GroupPath(group) + "/offsets"
}

// OffsetsTopicPath returns /consumers/<group>/offsets/<topic>.
func OffsetsTopicPath(group, topic string) string {
	return OffsetsPath(group) + "/" + topic
}

// OffsetPath returns /consumers/<group>/offsets/<topic>/<partition>, the
// persistent node holding the next offset to consume (see EncodeOffset).
func OffsetPath(group, topic string, partition int32) string {
	return OffsetsTopicPath(group, topic) + "/" + formatInt32(partition)
}

// BrokerIDPath returns /brokers/ids/<id>, the registration of one broker
// (see DecodeBroker).
func BrokerIDPath(id int32) string {
	return BrokerIDsPath + "/" + formatInt32(id)
}

// TopicPath returns /brokers/topics/<topic>, the replica assignment of a
// topic (see DecodeTopicPartitions).
func TopicPath(topic string) string {
	return BrokerTopicsPath + "/" + topic
}

// PartitionStatePath returns /brokers/topics/<topic>/partitions/<partition>/state,
// the leader and ISR of a partition (see DecodePartitionState).
func PartitionStatePath(topic string, partition int32) string {
	return TopicPath(topic) + "/partitions/" + formatInt32(partition) + "/state"
}

func formatInt32(n int32) string {
	return strconv.FormatInt(int64(n), 10)
}
