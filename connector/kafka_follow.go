package connector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/kafkagroup"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
)

// follow waits for gen, started from kgen, to end, or Shutdown, or a
// stream to stall (stalled), applying meanwhile the coordinator's updates
// of the assignment (group.protocol=consumer: kgen.Updates), until one
// cannot be applied (failed: the caller ends the generation and rejoins).
// It returns the generation current at the end.
func (r *kafkaRun) follow(cg *kafkagroup.Generation, gen *generation) (cur *generation, stalled []*streamcore.Control, failed bool) {
	k, c := r.k, r.k.c
	cur = gen
	interval := c.cfg.MaxPollInterval
	tick := time.NewTicker(min(max(interval/8, 10*time.Millisecond), time.Second))
	defer tick.Stop()
	seen := map[*streamcore.Control]*streamProgress{}
	for {
		select {
		case <-cg.Done():
			return cur, nil, false
		case <-r.ctx.Done():
			return cur, nil, false
		case now := <-tick.C:
			if s := k.stalled(cur, seen, now, interval); len(s) > 0 {
				return cur, s, false
			}
		case <-cg.Updates():
			target := r.member.Target()
			next := r.nextGeneration(cur, cg, r.member.Epoch(), target)
			ctx, cancel := context.WithTimeout(r.ctx, interval)
			err := c.continueKafka(ctx, cur, next)
			cancel()
			if err != nil {
				if r.ctx.Err() == nil {
					c.report(fmt.Errorf("connector: apply the assignment of epoch %d: %w", next.id, err))
				}
				c.mu.Lock()
				if c.gen == next {
					cur = next
				}
				c.mu.Unlock()
				return cur, nil, true
			}
			cur = next
			r.member.Acknowledge(cg, topicsOf(next.owned))
		}
	}
}

// nextGeneration is cur with target's partitions: each kept partition on
// its stream, each new one on the stream of its topic with the fewest
// partitions (the lowest first).
func (r *kafkaRun) nextGeneration(cur *generation, cg *kafkagroup.Generation, epoch int32, target map[string][]int32) *generation {
	owned := r.place(target, cur.owned)
	return &generation{id: int64(epoch), owned: owned,
		ctx: cg.Context(), fence: cur.fence, kafka: cg}
}

// continueKafka replaces the current generation prev with next, which
// continues it: the partitions only prev owns are revoked (revokeSome:
// stopped, committed, the listener told), then those only next owns are
// started (assignSome); those both own on the same stream keep flowing.
func (c *ConsumerConnector) continueKafka(ctx context.Context, prev, next *generation) error {
	removed, added := moves(prev, next)
	if len(removed) > 0 {
		// A failed commit does not keep the partitions: they are
		// revoked all the same, as Java's consumer does.
		if err := c.revokeSome(ctx, prev, next, removed); err != nil {
			c.report(underOnce(errors.New("connector: commit of the revoked partitions"), err))
		}
		prev = next
	}
	if len(added) > 0 {
		return c.assignSome(ctx, prev, next, added)
	}
	c.mu.Lock()
	if c.gen == prev {
		c.gen = next
	}
	c.mu.Unlock()
	return nil
}
