package connector

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// This file holds the connector's side of Kafka's cooperative rebalance
// protocol (KIP-429) in Kafka mode: partition.assignment.strategy
// cooperative-sticky alone. The loop (kafka_group.go) keeps a cooperative
// generation delivering while the member rejoins, and hands it over to
// the generation that continues it here.

// startChain starts the context of a chain of cooperative generations,
// ending the previous chain's if any; the fetchers of every generation of
// the chain run under it, since the partitions a generation keeps go on
// flowing in the next one.
func (r *kafkaRun) startChain() context.Context {
	r.endChain()
	ctx, cancel := context.WithCancel(context.Background())
	r.chainCancel = cancel
	return ctx
}

// endChain ends the current chain's context, if any.
func (r *kafkaRun) endChain() {
	if r.chainCancel != nil {
		r.chainCancel()
		r.chainCancel = nil
	}
}

// endKept revokes kept, the generation delivering while the member
// rejoined, if any: in an orderly way (commit, listener) unless lost.
func (r *kafkaRun) endKept(kept *generation, lost bool) {
	if kept != nil {
		r.end(kept, lost)
	}
}

// place returns the threads of assignment's partitions for a generation
// that continues one owning kept: a partition kept stays on its thread;
// one gained goes to the stream of its topic (a wildcard's streams serve
// every topic) that has the fewest partitions of it, the lowest-numbered
// of those.
func (r *kafkaRun) place(assignment map[string][]int32, kept map[zkutil.TopicPartition]zkutil.ConsumerThreadID) map[zkutil.TopicPartition]zkutil.ConsumerThreadID {
	c := r.k.c
	owned := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for _, topic := range slices.Sorted(maps.Keys(assignment)) {
		n := r.streamsFor(topic)
		if n < 1 {
			continue
		}
		load := make([]int, n)
		var gained []int32
		for _, p := range assignment[topic] {
			tp := zkutil.TopicPartition{Topic: topic, Partition: p}
			if th, ok := kept[tp]; ok && th.Thread < n {
				owned[tp] = th
				load[th.Thread]++
			} else {
				gained = append(gained, p)
			}
		}
		for _, p := range gained {
			least := 0
			for i := range load {
				if load[i] < load[least] {
					least = i
				}
			}
			load[least]++
			owned[zkutil.TopicPartition{Topic: topic, Partition: p}] = zkutil.ConsumerThreadID{ConsumerID: c.id, Thread: least}
		}
	}
	return owned
}

// streamsFor returns how many streams serve topic's partitions (a
// wildcard's serve every topic); with none it warns that they are ignored.
func (r *kafkaRun) streamsFor(topic string) int {
	n := r.threads[topic]
	if r.wildcard {
		n = r.threads[""]
	}
	if n < 1 {
		r.k.c.log.Warn("assigned partitions of a topic this member has no stream for; ignoring them", "topic", topic)
	}
	return n
}

// handOverKafka replaces kept, the generation that delivered while the
// member rejoined, with next, which continues it: what both own keeps
// flowing; what only kept owns is given up (committed as a member of
// next's generation, which the coordinator now requires; the listener is
// told about it alone); what only next owns is started (the listener is
// told about it alone). It reports whether anything was given up, in which
// case the member must rejoin at once. On an error starting the gained
// partitions, kept's partitions stay current (handOver) and the error is
// returned.
func (r *kafkaRun) handOverKafka(kept, next *generation) (gaveUp bool, err error) {
	c := r.k.c
	// The partitions kept owns are now owned as a member of next's
	// generation: commits of them must carry its id.
	bridge := &generation{id: next.id, owned: kept.owned,
		ctx: kept.ctx, fence: kept.fence, kafka: next.kafka}
	c.mu.Lock()
	if c.gen == kept {
		c.gen = bridge
	}
	c.mu.Unlock()
	for tp, th := range kept.owned {
		if next.owned[tp] != th {
			gaveUp = true
			break
		}
	}
	ctx, cancel := context.WithTimeout(r.ctx, c.cfg.MaxPollInterval)
	defer cancel()
	if err := c.handOver(ctx, bridge, next); err != nil {
		return gaveUp, fmt.Errorf("hand over to generation %d: %w", next.id, err)
	}
	if gaveUp {
		c.log.Info("gave partitions up in a cooperative rebalance: rejoining", "generation", next.id)
	}
	return gaveUp, nil
}

// commitKept commits, with auto.commit.enable, the consumed offsets of
// gen's partitions before the member rejoins while they keep flowing, as
// Java's consumer commits before every join. A failure is logged: the
// partitions stay this member's, the next commit covers them.
func (r *kafkaRun) commitKept(gen *generation) {
	c := r.k.c
	if !c.cfg.AutoCommitEnable {
		return
	}
	c.mu.Lock()
	infos := maps.Clone(c.infos)
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.ctx, c.cfg.SocketTimeout)
	defer cancel()
	if err := c.commitInfos(ctx, gen, infos, 1); err != nil {
		c.log.Info("commit before rejoining failed", "generation", gen.id, "err", err)
	}
}

// currentGeneration returns the current generation, nil if none.
func (c *ConsumerConnector) currentGeneration() *generation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}
