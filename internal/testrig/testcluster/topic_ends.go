package testcluster

import (
	"fmt"

	"github.com/IBM/sarama"
)

// TopicEnds returns the end offset (high water mark) of each partition of
// topic on the cluster at brokers, and an error if the topic does not
// exist or a partition does not start at offset 0: what a benchmark checks
// before it reuses a topic it filled earlier.
func TopicEnds(brokers []string, topic string) ([]int64, error) {
	cfg := SaramaConfig()
	cfg.Metadata.AllowAutoTopicCreation = false
	client, err := sarama.NewClient(brokers, cfg)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	parts, err := client.Partitions(topic)
	if err != nil {
		return nil, err
	}
	ends := make([]int64, len(parts))
	for _, p := range parts {
		first, err := client.GetOffset(topic, p, sarama.OffsetOldest)
		if err != nil {
			return nil, err
		}
		if first != 0 {
			return nil, fmt.Errorf("partition %d of %s starts at %d", p, topic, first)
		}
		if ends[p], err = client.GetOffset(topic, p, sarama.OffsetNewest); err != nil {
			return nil, err
		}
	}
	return ends, nil
}
