package zkutil

import "strconv"

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	// Topic and Partition name the partition.
	Topic     string
	Partition int32
}

// String formats the partition as Kafka 1.x does ("topic-3").
func (tp TopicPartition) String() string {
	return tp.Topic + "-" + strconv.FormatInt(int64(tp.Partition), 10)
}
