package zkbrokers

import (
	"strconv"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// Roots of the brokers' part of Kafka's ZooKeeper layout, relative to the
// chroot of the ZooKeeper connection string.
const (
	// BrokerIDsPath holds one ephemeral child per live broker, named by its id.
	BrokerIDsPath = "/brokers/ids"
	// BrokerTopicsPath holds one child per topic with its replica assignment.
	BrokerTopicsPath = "/brokers/topics"
)

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

// decodeError wraps the cause of a value that does not decode with the
// znode it was read from.
func decodeError(path string, err error) error {
	return &zkutil.DecodeError{Path: path, Err: err}
}
