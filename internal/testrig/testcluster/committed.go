package testcluster

import (
	"fmt"

	"github.com/IBM/sarama"
)

// KafkaCommitted reads group's committed offsets of the first partitions
// partitions of topic from the group's coordinator (OffsetFetch v5, Kafka
// 2.1 and later), leaving out partitions without one.
func (c *Cluster) KafkaCommitted(group, topic string, partitions int32) (map[int32]int64, error) {
	client, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
	if err != nil {
		return nil, fmt.Errorf("testcluster: client: %w", err)
	}
	defer client.Close()
	coord, err := client.Coordinator(group)
	if err != nil {
		return nil, fmt.Errorf("testcluster: coordinator of group %s: %w", group, err)
	}
	req := &sarama.OffsetFetchRequest{Version: 5, ConsumerGroup: group}
	for p := range partitions {
		req.AddPartition(topic, p)
	}
	resp, err := coord.FetchOffset(req)
	if err != nil {
		return nil, fmt.Errorf("testcluster: OffsetFetch of group %s: %w", group, err)
	}
	out := map[int32]int64{}
	for p := range partitions {
		if b := resp.GetBlock(topic, p); b != nil && b.Offset >= 0 {
			out[p] = b.Offset
		}
	}
	return out, nil
}
