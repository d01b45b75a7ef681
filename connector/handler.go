package connector

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/zkconsumer/zkconsumer/rebalance"
	"github.com/zkconsumer/zkconsumer/stream"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// handler is the connector as the ZooKeeper rebalance member sees it: it
// stops and starts the data path around each generation. Kafka mode's
// generation loop (kafka_group.go) calls the same revoke and assign.
type handler ConsumerConnector

var _ rebalance.Handler = (*handler)(nil)

// Revoke ends gen: see revoke.
func (h *handler) Revoke(ctx context.Context, gen *rebalance.Generation, lost bool) error {
	c := (*ConsumerConnector)(h)
	return c.revoke(ctx, c.zkGeneration(gen), lost)
}

// Assign starts gen: see assign.
func (h *handler) Assign(ctx context.Context, gen *rebalance.Generation) error {
	c := (*ConsumerConnector)(h)
	return c.assign(ctx, c.zkGeneration(gen))
}

// revoke stops fetching, fences every partition of gen so that no message
// of it is handed out any more, drops what is buffered, commits (when
// ownership is still ours and auto-commit is on) and tells the listener.
func (c *ConsumerConnector) revoke(ctx context.Context, gen *generation, lost bool) error {
	c.fetcher.StopConnections()
	c.mu.Lock()
	infos := c.infos
	if !lost {
		c.releasing = gen // commits stay allowed until ownership is released
	}
	streams := slices.Collect(maps.Values(c.streams))
	c.mu.Unlock()
	for _, info := range infos {
		info.Revoke()
	}
	for _, s := range streams {
		s.Clear()
	}
	c.carryProgress(infos)
	var err error
	if !lost && c.cfg.AutoCommitEnable {
		err = c.commitLast(ctx, gen, infos)
	}
	if c.listener != nil {
		c.listener.BeforeReleasingPartitions(ctx, c, gen.ownedTopics(), lost)
	}
	c.mu.Lock()
	c.infos, c.gen, c.releasing = nil, nil, nil
	c.mu.Unlock()
	c.log.Info("released generation", "generation", gen.id, "partitions", len(gen.owned), "lost", lost)
	return err
}

// assign reads the start offsets of gen's partitions, now that they are
// owned, and starts fetching them into the streams of their threads.
func (c *ConsumerConnector) assign(ctx context.Context, gen *generation) error {
	tps := make([]zkutil.TopicPartition, 0, len(gen.owned))
	for tp := range gen.owned {
		tps = append(tps, tp)
	}
	offsets, unreadable, err := c.offsets.Fetch(ctx, tps)
	if err != nil {
		return err
	}
	infos := make(map[zkutil.TopicPartition]*stream.PartitionTopicInfo, len(tps))
	list := make([]*stream.PartitionTopicInfo, 0, len(tps))
	for tp, th := range gen.owned {
		s := c.streamFor(tp.Topic, th.Thread)
		if s == nil {
			return fmt.Errorf("connector: no stream for thread %s of topic %s", th, tp.Topic)
		}
		off, ok := offsets[tp]
		if !ok {
			off = zkutil.NoOffset // unreadable: held, never fetched or committed from a guess
		} else {
			off = c.startOffset(tp, off)
		}
		info := stream.NewPartitionTopicInfo(tp.Topic, tp.Partition, s.Queue(), off, off, c.cfg.FetchMessageMaxBytes)
		info.SetFence(gen.fence)
		info.SetCounters(c.countersFor(tp.Topic))
		infos[tp] = info
		if _, held := unreadable[tp]; !held {
			list = append(list, info)
		}
	}
	c.commitMu.Lock()
	for tp, off := range offsets {
		c.checkpoint[tp] = off
	}
	c.commitMu.Unlock()
	if c.listener != nil {
		global := map[string]map[int32]ConsumerThreadID{}
		for _, owned := range gen.assignment {
			for tp, th := range owned {
				if global[tp.Topic] == nil {
					global[tp.Topic] = map[int32]ConsumerThreadID{}
				}
				global[tp.Topic][tp.Partition] = th
			}
		}
		c.listener.BeforeStartingFetchers(ctx, c, global)
	}
	c.mu.Lock()
	c.infos, c.gen, c.ownErr = infos, gen, nil
	c.keepPauses(infos)
	c.mu.Unlock()
	if err := c.fetcher.StartConnections(gen.ctx, list); err != nil {
		return err
	}
	c.holdUnreadable(gen, infos, unreadable)
	c.log.Info("started generation", "generation", gen.id, "partitions", len(list))
	return nil
}
