package kafkagroup

import (
	"fmt"
	"maps"
	"slices"

	"github.com/IBM/sarama"
)

// partitionCounts returns the number of partitions of each of topics that
// exists (all topics of the cluster when topics is nil). Topics that do not
// exist or have no partitions are left out, as Java's leader leaves topics
// without metadata out of the assignment.
func (m *Member) partitionCounts(topics []string) (map[string]int32, error) {
	if topics != nil && len(topics) == 0 {
		return map[string]int32{}, nil
	}
	b, err := m.anyBroker()
	if err != nil {
		return nil, err
	}
	req := sarama.NewMetadataRequest(sarama.V2_4_0_0, topics)
	req.AllowAutoTopicCreation = false
	resp, err := b.GetMetadata(req)
	if err != nil {
		if m.ctx.Err() == nil {
			m.brokerFailed(b, err)
		}
		return nil, fmt.Errorf("kafkagroup: metadata: %w", err)
	}
	counts := map[string]int32{}
	for _, t := range resp.Topics {
		switch t.Err {
		case sarama.ErrNoError:
		case sarama.ErrUnknownTopicOrPartition, sarama.ErrInvalidTopic:
			continue
		default:
			// LEADER_NOT_AVAILABLE and the like still list the
			// partitions; TOPIC_AUTHORIZATION_FAILED lists none.
		}
		if len(t.Partitions) > 0 {
			counts[t.Name] = int32(len(t.Partitions))
		}
	}
	return counts, nil
}

// subscription returns the topics this member subscribes to now, sorted:
// Config.Topics, or the topics of the cluster the wildcard admits.
func (m *Member) subscription() ([]string, error) {
	if m.cfg.Filter == nil {
		topics := slices.Clone(m.cfg.Topics)
		slices.Sort(topics)
		return slices.Compact(topics), nil
	}
	all, err := m.partitionCounts(nil)
	if err != nil {
		return nil, err
	}
	var topics []string
	for _, t := range slices.Sorted(maps.Keys(all)) {
		if m.cfg.Filter.Allows(t, m.cfg.ExcludeInternalTopics) {
			topics = append(topics, t)
		}
	}
	return topics, nil
}
