package testcluster

import (
	"fmt"
	"slices"

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

// DescribeGroup returns the state of a classic Kafka group and each
// member's assignment (topic to sorted partitions) as its coordinator
// stores them (DescribeGroups).
func (c *Cluster) DescribeGroup(group string) (state string, members map[string]map[string][]int32, err error) {
	client, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
	if err != nil {
		return "", nil, fmt.Errorf("testcluster: client: %w", err)
	}
	defer client.Close()
	coord, err := client.Coordinator(group)
	if err != nil {
		return "", nil, fmt.Errorf("testcluster: coordinator of group %s: %w", group, err)
	}
	resp, err := coord.DescribeGroups(&sarama.DescribeGroupsRequest{Groups: []string{group}})
	if err != nil {
		return "", nil, fmt.Errorf("testcluster: DescribeGroups of group %s: %w", group, err)
	}
	if len(resp.Groups) != 1 {
		return "", nil, fmt.Errorf("testcluster: DescribeGroups of group %s: %d groups in the answer", group, len(resp.Groups))
	}
	g := resp.Groups[0]
	members = map[string]map[string][]int32{}
	for id, md := range g.Members {
		a, err := md.GetMemberAssignment()
		if err != nil {
			return "", nil, fmt.Errorf("testcluster: assignment of member %s of group %s: %w", id, group, err)
		}
		members[id] = map[string][]int32{}
		if a != nil {
			for topic, ps := range a.Topics {
				ps = slices.Clone(ps)
				slices.Sort(ps)
				members[id][topic] = ps
			}
		}
	}
	return g.State, members, nil
}
