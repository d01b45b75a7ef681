package connector

import (
	"context"

	"github.com/zkconsumer/zkconsumer/internal/kafkagroup"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/zkgroup"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// generation is one generation of the group as the data path sees it, in
// either coordination mode: the partitions this member owns and the stream
// (thread) of each, what fences their messages, and the context the
// generation's fetchers run under. The revoke and assign steps
// (handler.go) work on it alike for both modes; only commits and the
// ownership check differ (commit.go).
type generation struct {
	// id is the generation's number, for logs: the member's count in
	// ZooKeeper mode, the coordinator's generation id in Kafka mode.
	id int64
	// owned maps each owned partition to the thread that consumes it.
	owned map[zkutil.TopicPartition]zkutil.ConsumerThreadID
	ctx   context.Context
	fence streamcore.Fence

	// zk is set in ZooKeeper mode, kafka in Kafka mode.
	zk    *zkgroup.Generation
	kafka *kafkagroup.Generation
}

// zkGeneration returns the generation of gen, a generation of the
// ZooKeeper member: the current one if it is gen's.
func (c *ConsumerConnector) zkGeneration(gen *zkgroup.Generation) *generation {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range []*generation{c.gen, c.releasing} {
		if g != nil && g.zk == gen {
			return g
		}
	}
	return &generation{
		id: int64(gen.ID), owned: gen.Owned,
		ctx: gen.Context(), fence: c.session.Bind(gen.SessionID), zk: gen,
	}
}

// ownedTopics lists g's partitions by topic, each list sorted.
func (g *generation) ownedTopics() map[string][]int32 { return topicsOf(g.owned) }

// moves returns what changes from prev to next, a generation that
// continues it: removed, the partitions (with their threads) only prev
// owns on that thread, and added, those only next owns on its thread. A
// partition both own on the same thread is in neither: it keeps flowing.
func moves(prev, next *generation) (removed, added map[zkutil.TopicPartition]zkutil.ConsumerThreadID) {
	removed = map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for tp, th := range prev.owned {
		if next.owned[tp] != th {
			removed[tp] = th
		}
	}
	added = map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for tp, th := range next.owned {
		if prev.owned[tp] != th {
			added[tp] = th
		}
	}
	return removed, added
}
