package kafkagroup

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// partitionCounts returns the number of partitions of each of topics that
// exists (all topics of the cluster when topics is nil). Topics that do not
// exist or have no partitions are left out, as Java's leader leaves topics
// without metadata out of the assignment. Topics the brokers refuse to
// describe (TOPIC_AUTHORIZATION_FAILED) are left out too, and reported.
func (p *classic) partitionCounts(topics []string) (map[string]int32, error) {
	m := p.m
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
		return nil, fmt.Errorf("metadata from broker %d at %s: %w", b.ID(), b.Addr(), m.explain(err))
	}
	counts := map[string]int32{}
	var refused []string
	for _, t := range resp.Topics {
		switch t.Err {
		case sarama.ErrNoError:
		case sarama.ErrUnknownTopicOrPartition, sarama.ErrInvalidTopic:
			continue
		case sarama.ErrTopicAuthorizationFailed:
			refused = append(refused, t.Name)
			continue
		default:
			// LEADER_NOT_AVAILABLE and the like still list the
			// partitions.
		}
		if len(t.Partitions) > 0 {
			counts[t.Name] = int32(len(t.Partitions))
		}
	}
	if len(refused) > 0 {
		slices.Sort(refused)
		names := strings.Join(refused, ",")
		m.report("topic authorization "+names, fmt.Errorf("%w %s (%w): grant the consumer's principal Describe and Read on them; they are left out of the assignment meanwhile",
			ErrTopicAuthorizationFailed, names, sarama.ErrTopicAuthorizationFailed))
	}
	return counts, nil
}

// subscription returns the topics this member subscribes to now, sorted
// (Config.Topics, or the topics of the cluster the wildcard admits), and
// the partition counts of those that exist.
func (p *classic) subscription() ([]string, map[string]int32, error) {
	m := p.m
	if m.cfg.Filter == nil {
		topics := slices.Clone(m.cfg.Topics)
		slices.Sort(topics)
		topics = slices.Compact(topics)
		counts, err := p.partitionCounts(topics)
		if err != nil {
			return nil, nil, err
		}
		return topics, counts, nil
	}
	all, err := p.partitionCounts(nil)
	if err != nil {
		return nil, nil, err
	}
	var topics []string
	counts := map[string]int32{}
	for _, t := range slices.Sorted(maps.Keys(all)) {
		if m.cfg.Filter.Allows(t, m.cfg.ExcludeInternalTopics) {
			topics = append(topics, t)
			counts[t] = all[t]
		}
	}
	return topics, counts, nil
}

// watch is what a generation's metadata check compares the cluster with:
// the topics whose partition counts the member read when it joined (its
// own subscription's; the leader's also those of every topic some member
// subscribes to, also when it skipped the assignment) and those counts. A
// change makes the member rejoin, so that the group rebalances over the
// new partitions whichever member notices first: as KIP-814 notes, below
// JoinGroup v9 the member the coordinator calls leader may not know it (a
// static leader that restarted joins as a follower), so the leader alone
// cannot be relied on there.
type watch struct {
	topics []string
	counts map[string]int32
}

// merge adds to w the topics of o it lacks, with o's counts.
func (w watch) merge(o watch) watch {
	out := watch{topics: slices.Clone(w.topics), counts: maps.Clone(w.counts)}
	for _, t := range o.topics {
		if slices.Contains(out.topics, t) {
			continue
		}
		out.topics = append(out.topics, t)
		if n, ok := o.counts[t]; ok {
			out.counts[t] = n
		}
	}
	slices.Sort(out.topics)
	return out
}

func (p *classic) checkEvery() time.Duration { return p.m.cfg.MetadataMaxAge }

// check tells, as Java's consumer does on each metadata refresh, whether
// the member must rejoin: the topics a wildcard subscription matches
// changed, or the partition count of a watched topic changed (see watch:
// every member watches its own subscription, the leader every topic of
// the group), or a watched topic appeared or vanished. A failed check is
// reported (Config.OnError) and tried again at the next period.
func (p *classic) check(ctx context.Context, gen *Generation) bool {
	m := p.m
	p.mu.Lock()
	joined, w := p.joined, p.watch
	p.mu.Unlock()
	var (
		counts map[string]int32
		err    error
	)
	if m.cfg.Filter != nil {
		var topics []string
		var all map[string]int32
		if topics, all, err = p.subscription(); err == nil && !slices.Equal(topics, joined) {
			m.log.Info("subscribed topics changed: rejoining", "before", joined, "now", topics)
			return true
		}
		if err == nil && !slices.ContainsFunc(w.topics, func(t string) bool { return !slices.Contains(topics, t) }) {
			counts = all // every watched topic is a subscribed one: no second request
		}
	}
	if err == nil && counts == nil {
		counts, err = p.partitionCounts(w.topics)
	}
	if err != nil {
		if ctx.Err() == nil {
			m.report("metadata", fmt.Errorf("check the partitions of group %s's topics (retried every metadata.max.age.ms %v): %w", m.cfg.Group, m.cfg.MetadataMaxAge, err))
		}
		return false
	}
	m.recovered("metadata")
	if now := pick(counts, w.topics); !maps.Equal(now, w.counts) {
		m.log.Info("partitions of the group's topics changed: rejoining", "before", w.counts, "now", now)
		return true
	}
	return false
}

// pick returns the counts of topics among counts.
func pick(counts map[string]int32, topics []string) map[string]int32 {
	out := make(map[string]int32, len(topics))
	for _, t := range topics {
		if n, ok := counts[t]; ok {
			out[t] = n
		}
	}
	return out
}
