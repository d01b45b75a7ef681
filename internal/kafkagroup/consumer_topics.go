package kafkagroup

import (
	"fmt"
	"maps"
	"slices"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/kip848"
)

// refreshTopicIDs reads the ids of the subscribed topics (Metadata v10,
// which carries topic ids), so that the coordinator's assignment, given by
// topic id, can be named, and this member's partitions sent by id. With a
// topic regex it reads every topic's: the coordinator decides which match.
func (p *consumer) refreshTopicIDs() error {
	m := p.m
	b, err := m.anyBroker()
	if err != nil {
		return err
	}
	req := &sarama.MetadataRequest{Version: 10, Topics: slices.Clone(m.cfg.Topics), AllowAutoTopicCreation: false}
	resp, err := b.GetMetadata(req)
	if err != nil {
		m.brokerFailed(b, err)
		return fmt.Errorf("metadata from broker %d at %s: %w", b.ID(), b.Addr(), err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range resp.Topics {
		if t.Err != sarama.ErrNoError || t.Uuid == (sarama.Uuid{}) {
			continue
		}
		id := kip848.UUID(t.Uuid)
		if old, ok := p.ids[t.Name]; ok && old != id {
			delete(p.names, old) // the topic was deleted and created again
		}
		p.ids[t.Name] = id
		p.names[id] = t.Name
	}
	return nil
}

// resolveLocked names the partitions of tps by topic, leaving out topics
// whose id is unknown; it reports whether some were left out.
func (p *consumer) resolveLocked(tps []kip848.TopicPartitions) (map[string][]int32, bool) {
	out := map[string][]int32{}
	missing := false
	for _, tp := range tps {
		name, ok := p.names[tp.TopicID]
		if !ok {
			missing = true
			continue
		}
		if len(tp.Partitions) == 0 {
			continue
		}
		ps := append(out[name], tp.Partitions...)
		slices.Sort(ps)
		out[name] = slices.Compact(ps)
	}
	return out, missing
}

// ownedLocked is p.owned by topic id, for a heartbeat.
func (p *consumer) ownedLocked() []kip848.TopicPartitions {
	out := []kip848.TopicPartitions{}
	for _, name := range slices.Sorted(maps.Keys(p.owned)) {
		id, ok := p.ids[name]
		if !ok {
			continue // cannot happen: owned partitions come from resolved ids
		}
		out = append(out, kip848.TopicPartitions{TopicID: id, Partitions: slices.Clone(p.owned[name])})
	}
	return out
}

func sameAssignment(a, b map[string][]int32) bool {
	return maps.EqualFunc(a, b, slices.Equal[[]int32])
}
