package rebalance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// groupView is one fresh read of a group and the topics it consumes: the
// input of one rebalance attempt.
type groupView struct {
	ctx AssignmentContext
	// broken lists members whose registration and topics whose partition
	// map could not be read; they are left out of the assignment instead of
	// stopping it.
	broken []error
}

// readGroup reads /consumers/<group>/ids and the partitions of every topic
// any member consumes, and builds the assignor's input for consumerID, whose
// own subscription is mine.
func readGroup(ctx context.Context, zk ZooKeeper, group, consumerID string, mine Subscription, excludeInternal bool) (groupView, error) {
	var v groupView
	ids, err := zk.Children(ctx, zkutil.ConsumerIDsPath(group))
	if err != nil {
		return v, fmt.Errorf("rebalance: list members of group %s: %w", group, err)
	}
	slices.Sort(ids)
	subs := make(map[string]Subscription, len(ids))
	wildcard := mine.Filter != nil
	for _, id := range ids {
		if id == consumerID {
			subs[id] = mine
			continue
		}
		path := zkutil.ConsumerIDPath(group, id)
		data, _, err := zk.Get(ctx, path)
		if errors.Is(err, zkutil.ErrNoNode) {
			continue // left while we were reading
		}
		if err != nil {
			return v, fmt.Errorf("rebalance: read member %s: %w", path, err)
		}
		reg, err := zkutil.DecodeRegistration(path, data)
		if err == nil {
			var s Subscription
			if s, err = subscriptionFromRegistration(reg); err == nil {
				subs[id] = s
				wildcard = wildcard || s.Filter != nil
				continue
			}
			err = fmt.Errorf("rebalance: member %s: %w", path, err)
		}
		v.broken = append(v.broken, err)
	}
	if _, ok := subs[consumerID]; !ok {
		return v, fmt.Errorf("rebalance: our own registration %s is missing", zkutil.ConsumerIDPath(group, consumerID))
	}

	var allTopics []string
	if wildcard {
		if allTopics, err = zk.Children(ctx, zkutil.BrokerTopicsPath); err != nil && !errors.Is(err, zkutil.ErrNoNode) {
			return v, fmt.Errorf("rebalance: list topics: %w", err)
		}
		slices.Sort(allTopics)
	}

	v.ctx = AssignmentContext{
		ConsumerID:         consumerID,
		ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{},
		PartitionsForTopic: map[string][]int32{},
	}
	for _, id := range slices.Sorted(maps.Keys(subs)) {
		v.ctx.Consumers = append(v.ctx.Consumers, id)
		threads := subs[id].ThreadIDs(id, allTopics, excludeInternal)
		if id == consumerID {
			v.ctx.MyTopicThreadIDs = threads
		}
		for t, ths := range threads {
			v.ctx.ConsumersForTopic[t] = append(v.ctx.ConsumersForTopic[t], ths...)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(v.ctx.ConsumersForTopic)) {
		path := zkutil.TopicPath(t)
		data, _, err := zk.Get(ctx, path)
		if errors.Is(err, zkutil.ErrNoNode) {
			continue // Kafka: a missing topic has no partitions
		}
		if err != nil {
			return v, fmt.Errorf("rebalance: read topic %s: %w", path, err)
		}
		parts, err := zkutil.DecodeTopicPartitions(t, path, data)
		if err != nil {
			v.broken = append(v.broken, err) // consumed by nobody until fixed
			continue
		}
		v.ctx.PartitionsForTopic[t] = zkutil.SortedPartitions(parts)
	}
	return v, nil
}
