package connector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/zkgroup"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// handler is the connector as the ZooKeeper rebalance member sees it: it
// stops and starts the data path around each generation. Kafka mode's
// generation loop (kafka_group.go) calls the same revoke and assign.
type handler ConsumerConnector

var _ zkgroup.IncrementalHandler = (*handler)(nil)

// Revoke ends gen: see revoke.
func (h *handler) Revoke(ctx context.Context, gen *zkgroup.Generation, lost bool) error {
	c := (*ConsumerConnector)(h)
	return c.revoke(ctx, c.zkGeneration(gen), lost)
}

// Assign starts gen: see assign.
func (h *handler) Assign(ctx context.Context, gen *zkgroup.Generation) error {
	c := (*ConsumerConnector)(h)
	return c.assign(ctx, c.zkGeneration(gen))
}

// Continue replaces the current generation from with to, which continues
// it (incremental hand-over, zkconsumer.rebalance.protocol=cooperative):
// the partitions both own with the same thread keep flowing; those only
// from owns are revoked (revokeSome), those only to owns are started
// (assignSome).
func (h *handler) Continue(ctx context.Context, from, to *zkgroup.Generation) error {
	c := (*ConsumerConnector)(h)
	prev := c.zkGeneration(from)
	next := &generation{
		id: int64(to.ID), owned: to.Owned,
		ctx: to.Context(), fence: prev.fence, zk: to,
	}
	return c.handOver(ctx, prev, next)
}

// handOver replaces prev, the current generation, with next, which
// continues it, in either mode: the partitions both own with the same
// thread keep flowing; those only prev owns are revoked (revokeSome),
// those only next owns are started (assignSome).
func (c *ConsumerConnector) handOver(ctx context.Context, prev, next *generation) error {
	removed, added := moves(prev, next)
	var err error
	if len(removed) > 0 {
		err = c.revokeSome(ctx, prev, next, removed)
	}
	if len(added) > 0 {
		if len(removed) > 0 {
			// The member never asks for both at once; if it did, the
			// partitions it gains start from what is now current.
			prev = next
		}
		return c.assignSome(ctx, prev, next, added)
	}
	c.mu.Lock()
	if c.gen == prev {
		c.gen = next
	}
	c.mu.Unlock()
	return err
}

// revoke stops fetching, fences every partition of gen so that no message
// of it is handed out any more, drops what is buffered, commits (when
// ownership is still ours and auto-commit is on) and tells the listener
// (unless gen owns nothing).
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
		lost = membershipRefused(err)
	}
	if c.listener != nil && len(gen.owned) > 0 {
		c.listener.BeforeReleasingPartitions(c.listenerContext(ctx), c, gen.ownedTopics(), lost)
	}
	c.endCommits(gen.owned)
	c.mu.Lock()
	c.infos, c.gen, c.releasing = nil, nil, nil
	c.mu.Unlock()
	c.log.Info("released generation", "generation", gen.id, "partitions", len(gen.owned), "lost", lost)
	return err
}

// membershipRefused reports whether err, the error of a final commit, is
// the coordinator's refusal of a member it no longer counts (Kafka mode:
// the membership was lost, or another instance took the
// group.instance.id over): the partitions may be another member's
// already, so they are released as lost, not handed over.
func membershipRefused(err error) bool {
	return errors.Is(err, ErrCommitFenced) || errors.Is(err, ErrMembershipLost)
}

// revokeSome is revoke for the partitions of prev that move away in an
// incremental hand-over, removed, while the others keep flowing: their
// fetching stops (the fetchers drop a revoked partition before their next
// request), their messages are fenced (queued chunks are skipped when
// they reach the head of their stream's queue, which also serves
// partitions that stay, so no stream is cleared), their consumed offsets
// are committed with auto.commit.enable, and the listener is told about
// them alone. next, which owns the rest, is current when it returns.
func (c *ConsumerConnector) revokeSome(ctx context.Context, prev, next *generation, removed map[zkutil.TopicPartition]zkutil.ConsumerThreadID) error {
	c.mu.Lock()
	moved := make(map[zkutil.TopicPartition]*streamcore.PartitionTopicInfo, len(removed))
	for tp := range removed {
		if info, ok := c.infos[tp]; ok {
			moved[tp] = info
		}
	}
	c.releasing = prev // commits of the moved partitions stay allowed until release
	c.mu.Unlock()
	for _, info := range moved {
		info.Revoke()
	}
	c.carryProgress(moved)
	var err error
	if c.cfg.AutoCommitEnable {
		err = c.commitLast(ctx, prev, moved)
	}
	lost := membershipRefused(err)
	if c.listener != nil {
		c.listener.BeforeReleasingPartitions(c.listenerContext(ctx), c, topicsOf(removed), lost)
	}
	c.endCommits(removed)
	c.mu.Lock()
	kept := make(map[zkutil.TopicPartition]*streamcore.PartitionTopicInfo, len(c.infos))
	for tp, info := range c.infos {
		if _, ok := removed[tp]; !ok {
			kept[tp] = info
		}
	}
	for tp := range removed {
		delete(c.paused, tp)
	}
	c.infos, c.gen, c.releasing = kept, next, nil
	c.mu.Unlock()
	c.log.Info("released partitions", "generation", prev.id, "released", len(removed), "kept", len(kept), "lost", lost)
	return err
}

// endCommits ends the commits of owned's partitions: once it returns, a
// commit started for them earlier has either been written or will skip
// them. Called when their revoke is done, before ownership is released.
func (c *ConsumerConnector) endCommits(owned map[zkutil.TopicPartition]zkutil.ConsumerThreadID) {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	for tp := range owned {
		delete(c.committable, tp)
	}
}

// assign reads the start offsets of gen's partitions, now that they are
// owned, tells the listener (unless gen owns nothing) and starts fetching
// them into the streams of their threads.
func (c *ConsumerConnector) assign(ctx context.Context, gen *generation) error {
	tps := slices.Collect(maps.Keys(gen.owned))
	infos, list, unreadable, err := c.newInfos(ctx, gen, gen.owned, tps)
	if err != nil {
		return err
	}
	if c.listener != nil && len(gen.owned) > 0 {
		c.listener.BeforeStartingFetchers(c.listenerContext(ctx), c, gen.ownedTopics())
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

// assignSome is assign for the partitions next gains over prev in an
// incremental hand-over, added, all claimed: it reads their start
// offsets and adds them to the running fetchers, while prev's partitions
// keep flowing. The listener is told about them alone. On an error prev
// stays current and nothing of added is fetched.
func (c *ConsumerConnector) assignSome(ctx context.Context, prev, next *generation, added map[zkutil.TopicPartition]zkutil.ConsumerThreadID) error {
	tps := slices.Collect(maps.Keys(added))
	infos, list, unreadable, err := c.newInfos(ctx, next, added, tps)
	if err != nil {
		return err
	}
	if c.listener != nil {
		c.listener.BeforeStartingFetchers(c.listenerContext(ctx), c, topicsOf(added))
	}
	c.mu.Lock()
	all := maps.Clone(c.infos)
	if all == nil {
		all = map[zkutil.TopicPartition]*streamcore.PartitionTopicInfo{}
	}
	maps.Copy(all, infos)
	c.infos, c.gen, c.ownErr = all, next, nil
	c.mu.Unlock()
	if err := c.fetcher.AddPartitions(list); err != nil {
		// The connections end only with the generation, which cannot end
		// during this call: put prev back all the same.
		for _, info := range infos {
			info.Revoke()
		}
		c.endCommits(added)
		c.mu.Lock()
		c.infos, c.gen = maps.Clone(all), prev
		for tp := range added {
			delete(c.infos, tp)
		}
		c.mu.Unlock()
		return fmt.Errorf("connector: start fetching %d partitions: %w", len(list), err)
	}
	c.holdUnreadable(next, infos, unreadable)
	c.log.Info("started partitions", "generation", next.id, "started", len(list), "owned", len(next.owned))
	return nil
}

// newInfos reads the start offsets of tps, partitions of gen that owned
// maps to their threads, and returns their PartitionTopicInfos (all of
// them, and in list those whose offset could be read) and the reasons of
// those that could not. It records the offsets read as committed and lets
// the partitions be committed from now on.
func (c *ConsumerConnector) newInfos(ctx context.Context, gen *generation, owned map[zkutil.TopicPartition]zkutil.ConsumerThreadID, tps []zkutil.TopicPartition) (infos map[zkutil.TopicPartition]*streamcore.PartitionTopicInfo, list []*streamcore.PartitionTopicInfo, unreadable map[zkutil.TopicPartition]error, err error) {
	offsets, unreadable, err := c.offsets.Fetch(ctx, tps)
	if err != nil {
		return nil, nil, nil, err
	}
	infos = make(map[zkutil.TopicPartition]*streamcore.PartitionTopicInfo, len(tps))
	list = make([]*streamcore.PartitionTopicInfo, 0, len(tps))
	for _, tp := range tps {
		th := owned[tp]
		s := c.streamFor(tp.Topic, th.Thread)
		if s == nil {
			return nil, nil, nil, fmt.Errorf("connector: no stream for thread %s of topic %s", th, tp.Topic)
		}
		off, ok := offsets[tp]
		if !ok {
			off = zkutil.NoOffset // unreadable: held, never fetched or committed from a guess
		} else {
			off = c.startOffset(tp, off)
		}
		info := streamcore.NewPartitionTopicInfo(tp.Topic, tp.Partition, s.Queue(), off, off, int32(c.cfg.FetchMessageMaxBytes))
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
	for _, tp := range tps {
		c.committable[tp] = true
	}
	c.commitMu.Unlock()
	return infos, list, unreadable, nil
}

// topicsOf lists owned's partitions by topic, each list sorted.
func topicsOf(owned map[zkutil.TopicPartition]zkutil.ConsumerThreadID) map[string][]int32 {
	out := map[string][]int32{}
	for tp := range owned {
		out[tp.Topic] = append(out[tp.Topic], tp.Partition)
	}
	for _, ps := range out {
		slices.Sort(ps)
	}
	return out
}
