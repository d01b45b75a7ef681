package connector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/backoff"
	"github.com/zkconsumer/zkconsumer/internal/kafkagroup"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/rebalance"
)

// consumerLoop is the generation loop of a group.protocol=consumer member
// (KIP-848). A generation is a membership: it starts with a Join and ends
// when the coordinator fences the member, it leaves after a stall, or
// Shutdown. Within it the assignment changes incrementally: on each
// update the partitions the coordinator took away are revoked alone
// (stopped, committed, the listener told), those it added are started
// alone, then the member acknowledges; the partitions it keeps flow
// throughout, on the same stream.
func (r *kafkaRun) consumerLoop() {
	defer close(r.done)
	defer r.firstDone(ErrShutdown)
	k, c := r.k, r.k.c
	started, attempts := time.Now(), 0
	for {
		attempts++
		kgen, err := r.member.Join(r.ctx)
		if err != nil {
			switch {
			case r.ctx.Err() != nil || errors.Is(err, kafkagroup.ErrMemberClosed):
				k.rebalanced(rebalance.RebalanceAborted, attempts, started)
				r.firstDone(err)
				return
			case errors.Is(err, kafkagroup.ErrFatal):
				k.rebalanced(rebalance.RebalanceFailed, attempts, started)
				c.report(fmt.Errorf("connector: %w", err))
				r.firstDone(err)
				return
			}
			c.report(fmt.Errorf("connector: join group %s: %w", c.cfg.GroupID, err))
			backoff.Sleep(r.ctx, c.cfg.RefreshLeaderBackoff)
			continue
		}
		cg := kgen
		gen := r.generation(kgen, nil)
		actx, cancel := context.WithTimeout(r.ctx, c.cfg.MaxPollInterval)
		err = c.assign(actx, gen)
		cancel()
		if err != nil {
			if r.ctx.Err() == nil {
				c.report(fmt.Errorf("connector: start generation %d: %w", kgen.ID, err))
			}
			r.end(gen, false)
			_ = r.member.Leave() // the coordinator counts the partitions as this member's: give them back
			backoff.Sleep(r.ctx, c.cfg.RefreshLeaderBackoff)
			continue
		}
		k.rebalanced(rebalance.RebalanceSucceeded, attempts, started)
		attempts = 0
		r.firstDone(nil)

		cur, stalled, failed := r.follow(cg, gen)
		started = time.Now()
		cause := cg.Err()
		lost := cause != nil && !errors.Is(cause, kafkagroup.ErrRebalanceStarted)
		r.end(cur, lost)
		switch {
		case errors.Is(cause, kafkagroup.ErrFatal):
			c.report(fmt.Errorf("connector: %w", cause))
			return
		case errors.Is(cause, kafkagroup.ErrMembershipLost):
			c.report(fmt.Errorf("%w: %w", rebalance.ErrOwnershipLost, cause))
		}
		if r.ctx.Err() != nil {
			return
		}
		switch {
		case len(stalled) > 0:
			r.leave(stalled)
		case failed:
			_ = r.member.Leave()
			backoff.Sleep(r.ctx, c.cfg.RefreshLeaderBackoff)
		}
	}
}

// follow applies the coordinator's updates to gen until the membership
// ends, Shutdown, a stream stalls (stalled), or an update cannot be
// applied (failed: the caller ends the generation and rejoins). It
// returns the generation current at the end.
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
	return &generation{id: int64(epoch), owned: owned, assignment: rebalance.Assignment{r.k.c.id: owned},
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
			c.report(fmt.Errorf("connector: commit of the revoked partitions: %w", err))
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
