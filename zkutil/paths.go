package zkutil

import "strconv"

// ConsumersPath holds one child per consumer group (ZkUtils.ConsumersPath).
// Like every path of this package, it is relative to the chroot of the
// ZooKeeper connection string.
const ConsumersPath = "/consumers"

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

func formatInt32(n int32) string {
	return strconv.FormatInt(int64(n), 10)
}
