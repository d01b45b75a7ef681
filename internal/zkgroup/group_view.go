package zkgroup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// groupView is one fresh read of a group and the topics it consumes: the
// input of one rebalance attempt.
type groupView struct {
	ctx zkassign.AssignmentContext
	// broken lists members whose registration and topics whose partition
	// map could not be read; they are left out of the assignment instead of
	// stopping it.
	broken []error
	// refused is set, and ctx left empty, when this member is not
	// admitted to the group (see admit): it must stay out.
	refused *StrategyError
	// excluded holds the other members left out of the group, and why;
	// they are left out of ctx.
	excluded map[string]*StrategyError
}

// groupReader is what readGroup needs of ZooKeeper.
type groupReader interface {
	Get(ctx context.Context, path string) ([]byte, zksession.Stat, error)
	Children(ctx context.Context, path string) ([]string, error)
}

// decodingReader is a groupReader that keeps what the nodes it read decode
// into (cachingReader), so that readGroup decodes a node only when its data
// changes.
type decodingReader interface {
	decode(path string, data []byte, f func() *decodedNode) *decodedNode
}

// peekingReader is a groupReader that can serve a node from a cache
// without a request (cachingReader).
type peekingReader interface {
	peek(path string) ([]byte, zksession.Stat, bool)
}

// decodeNode returns what data, read from path through zk, decodes into:
// f's result, kept by zk if it keeps them.
func decodeNode(zk groupReader, path string, data []byte, f func() *decodedNode) *decodedNode {
	if d, ok := zk.(decodingReader); ok {
		return d.decode(path, data, f)
	}
	return f()
}

// readGroup reads /consumers/<group>/ids and the partitions of every topic
// any member consumes, and builds the assignor's input for consumerID, whose
// own subscription is mine and whose partition.assignment.strategy is
// strategy. Members whose strategies cannot share the group are left out
// as admit decides, this member included (groupView.refused).
func readGroup(ctx context.Context, zk groupReader, group, consumerID string, mine Subscription, excludeInternal bool, strategy string) (groupView, error) {
	var v groupView
	ids, err := zk.Children(ctx, zkutil.ConsumerIDsPath(group))
	if err != nil {
		return v, fmt.Errorf("list members of group %s: %w", group, err)
	}
	slices.Sort(ids)
	subs := make(map[string]Subscription, len(ids))
	wildcard := mine.Filter != nil
	// The registrations are read at once (see forEach), then taken in
	// order, so every member sees the same errors in the same order.
	type read struct {
		data []byte
		err  error
	}
	reads := make([]read, len(ids))
	ages := make([]int64, len(ids))
	// Those a cache holds are taken at once; only the others are read.
	var toRead []int
	for i, id := range ids {
		if c, ok := zk.(peekingReader); ok {
			if data, st, ok := c.peek(zkutil.ConsumerIDPath(group, id)); ok {
				reads[i].data, ages[i] = data, st.Czxid
				continue
			}
		}
		toRead = append(toRead, i)
	}
	forEach(len(toRead), nil, func(k int) {
		i := toRead[k]
		var st zksession.Stat
		reads[i].data, st, reads[i].err = zk.Get(ctx, zkutil.ConsumerIDPath(group, ids[i]))
		ages[i] = st.Czxid
	})
	var members []groupMember
	for i, id := range ids {
		if id == consumerID {
			if err := reads[i].err; err != nil && !errors.Is(err, zksession.ErrNoNode) {
				return v, fmt.Errorf("read our own registration %s: %w", zkutil.ConsumerIDPath(group, id), err)
			}
			if reads[i].err == nil {
				subs[id] = mine
				members = append(members, groupMember{id: id, strategy: strategy, czxid: ages[i]})
			}
			continue
		}
		path := zkutil.ConsumerIDPath(group, id)
		data, err := reads[i].data, reads[i].err
		reads[i].data = nil
		if errors.Is(err, zksession.ErrNoNode) {
			continue // left while we were reading
		}
		if err != nil {
			return v, fmt.Errorf("read member %s: %w", path, err)
		}
		d := decodeNode(zk, path, data, func() *decodedNode {
			reg, err := zkutil.DecodeRegistration(path, data)
			if err != nil {
				return &decodedNode{err: err}
			}
			s, err := subscriptionFromRegistration(reg)
			if err != nil {
				return &decodedNode{err: fmt.Errorf("member %s: %w", path, err)}
			}
			return &decodedNode{sub: s, strategy: reg.AssignmentStrategy}
		})
		if d.err == nil {
			subs[id] = d.sub
			members = append(members, groupMember{id: id, strategy: d.strategy, czxid: ages[i]})
			continue
		}
		v.broken = append(v.broken, d.err)
	}
	if _, ok := subs[consumerID]; !ok {
		return v, fmt.Errorf("our own registration %s is missing", zkutil.ConsumerIDPath(group, consumerID))
	}
	v.excluded = admit(group, members)
	if v.refused = v.excluded[consumerID]; v.refused != nil {
		return v, nil
	}
	for id := range v.excluded {
		delete(subs, id)
	}
	for _, s := range subs {
		wildcard = wildcard || s.Filter != nil
	}

	var allTopics []string
	if wildcard {
		if allTopics, err = zk.Children(ctx, zkbrokers.BrokerTopicsPath); err != nil && !errors.Is(err, zksession.ErrNoNode) {
			return v, fmt.Errorf("list topics: %w", err)
		}
		slices.Sort(allTopics)
	}

	for _, m := range overBudget(subs, allTopics, excludeInternal) {
		id, n := m.id, m.threads
		if id == consumerID {
			return v, fmt.Errorf("our own subscription expands into %d thread ids, more than the group limit of %d", n, zkutil.MaxThreads)
		}
		delete(subs, id)
		v.broken = append(v.broken, fmt.Errorf("member %s left out: its subscription expands into %d thread ids, which would take the group over the limit of %d",
			zkutil.ConsumerIDPath(group, id), n, zkutil.MaxThreads))
	}

	v.ctx = zkassign.AssignmentContext{
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
	topics := slices.Sorted(maps.Keys(v.ctx.ConsumersForTopic))
	topicReads := make([]read, len(topics))
	forEach(len(topics), nil, func(i int) {
		topicReads[i].data, _, topicReads[i].err = zk.Get(ctx, zkbrokers.TopicPath(topics[i]))
	})
	for i, t := range topics {
		path := zkbrokers.TopicPath(t)
		data, err := topicReads[i].data, topicReads[i].err
		if errors.Is(err, zksession.ErrNoNode) {
			continue // Kafka: a missing topic has no partitions
		}
		if err != nil {
			return v, fmt.Errorf("read topic %s: %w", path, err)
		}
		d := decodeNode(zk, path, data, func() *decodedNode {
			parts, err := zkbrokers.DecodeTopicPartitions(t, path, data)
			if err != nil {
				return &decodedNode{err: err}
			}
			return &decodedNode{parts: zkbrokers.SortedPartitions(parts)}
		})
		if d.err != nil {
			v.broken = append(v.broken, d.err) // consumed by nobody until fixed
			continue
		}
		v.ctx.PartitionsForTopic[t] = slices.Clone(d.parts) // the assignor's own
	}
	return v, nil
}

// overBudget returns the members to leave out so that the thread ids of the
// whole group (every member's streams, wildcards expanded over allTopics)
// stay within zkutil.MaxThreads: the largest first, ties broken by id, so
// that every member reading the same group leaves out the same ones and a
// single absurd registration cannot push well-behaved members out. It
// counts without allocating thread ids.
func overBudget(subs map[string]Subscription, allTopics []string, excludeInternal bool) []memberThreads {
	members := make([]memberThreads, 0, len(subs))
	var total int64
	for id, s := range subs {
		n := s.threadCount(allTopics, excludeInternal)
		members = append(members, memberThreads{id, n})
		total += n
	}
	if total <= zkutil.MaxThreads {
		return nil
	}
	slices.SortFunc(members, func(a, b memberThreads) int {
		if c := cmp.Compare(b.threads, a.threads); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	var out []memberThreads
	for _, m := range members {
		if total <= zkutil.MaxThreads {
			break
		}
		out = append(out, m)
		total -= m.threads
	}
	return out
}

// memberThreads is a member and the number of thread ids it expands into.
type memberThreads struct {
	id      string
	threads int64
}
