package groups

// TEMPORARY until the groupfiles branch is merged.
type TopicPartition struct {
	Topic     string
	Partition int32
}
