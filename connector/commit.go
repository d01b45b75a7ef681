package connector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkconsumer/zkconsumer/rebalance/kafkagroup"
	"github.com/zkconsumer/zkconsumer/stream"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// CommitOffsets commits, for every partition this member owns, the offset
// after the last message the application consumed: a message counts as
// consumed once the application asks its stream for the next message or
// marks it (KafkaStream.MarkConsumed). Offsets that have not moved since the
// last commit are not written again. Nothing is committed for partitions
// whose ownership is no longer certain (during a rebalance, or while the
// ZooKeeper session is lost; in Kafka mode once the membership is lost).
//
// In Kafka mode (zkconsumer.group.coordination=kafka) the commit carries
// the generation and member id, and the coordinator refuses it if this
// member's generation is no longer current (it was removed from the group,
// or the group has rebalanced since): the error then wraps
// kafkagroup.ErrCommitFenced, and the next owner of the partitions
// consumes from the offsets committed before.
func (c *ConsumerConnector) CommitOffsets(ctx context.Context) error {
	c.mu.Lock()
	gen, infos := c.gen, c.infos
	c.mu.Unlock()
	if gen == nil || !c.stillOwns(gen) {
		return nil
	}
	return c.commitInfos(ctx, gen, infos, 1+c.cfg.OffsetsCommitMaxRetries)
}

// CommitOffsetsMap commits explicit offsets (the next offset to consume) for
// partitions this member owns. Partitions it does not own in its current
// session (in Kafka mode: generation) are refused with ErrNotOwner; the
// others are committed.
func (c *ConsumerConnector) CommitOffsetsMap(ctx context.Context, offsets map[zkutil.TopicPartition]int64) error {
	c.mu.Lock()
	gen := c.gen
	c.mu.Unlock()
	current := gen != nil && c.stillOwns(gen)
	var refused []error
	owned := map[zkutil.TopicPartition]int64{}
	for tp, off := range offsets {
		if !current {
			refused = append(refused, fmt.Errorf("%w: %s", ErrNotOwner, tp))
			continue
		}
		if _, ok := gen.owned[tp]; !ok {
			refused = append(refused, fmt.Errorf("%w: %s", ErrNotOwner, tp))
			continue
		}
		owned[tp] = off
	}
	var err error
	if current {
		err = c.commit(ctx, gen, owned, 1+c.cfg.OffsetsCommitMaxRetries)
	}
	return errors.Join(append(refused, err)...)
}

// stillOwns reports whether gen is still this member's generation: in
// ZooKeeper mode in the session that claimed it, in Kafka mode as long as
// the coordinator has not taken the membership away.
func (c *ConsumerConnector) stillOwns(gen *generation) bool {
	c.mu.Lock()
	member, current, releasing := c.member, c.gen, c.releasing
	c.mu.Unlock()
	if gen.kafka != nil {
		err := gen.kafka.Err()
		return (current == gen || releasing == gen) && (err == nil || errors.Is(err, kafkagroup.ErrRebalanceStarted))
	}
	return member != nil && (member.Generation() == gen.zk || releasing == gen) && c.session.ID() == gen.zk.SessionID
}

// commitInfos commits the consumed offsets of infos while gen still owns
// them; nothing once the ZooKeeper session that claimed them is gone.
func (c *ConsumerConnector) commitInfos(ctx context.Context, gen *generation, infos map[zkutil.TopicPartition]*stream.PartitionTopicInfo, attempts int) error {
	offsets := make(map[zkutil.TopicPartition]int64, len(infos))
	for tp, info := range infos {
		offsets[tp] = info.ConsumedOffset()
	}
	err := c.commit(ctx, gen, offsets, attempts)
	if errors.Is(err, ErrNotOwner) {
		return nil // the session that owned them is gone; the member reports the loss
	}
	return err
}

// commit writes the offsets that changed since the last commit as a member
// of gen. In ZooKeeper mode that is while the lease of the session that
// owns the partitions holds: each write is bound to the session
// (zkutil.InSession), so none is applied after the session is gone, and a
// commit to Kafka is made only while the lease holds. In Kafka mode the
// coordinator checks gen's generation and member id itself.
func (c *ConsumerConnector) commit(ctx context.Context, gen *generation, offsets map[zkutil.TopicPartition]int64, attempts int) error {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	changed := map[zkutil.TopicPartition]int64{}
	for tp, off := range offsets {
		if off < 0 {
			continue // nothing consumed and no position yet
		}
		if last, ok := c.checkpoint[tp]; ok && last == off {
			continue
		}
		changed[tp] = off
	}
	if len(changed) == 0 {
		return nil
	}
	var err error
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return errors.Join(err, ctx.Err())
			case <-time.After(c.cfg.OffsetsChannelBackoff):
			}
		}
		if gen.kafka != nil {
			err = c.kafka.commit(ctx, gen.kafka, changed)
			if errors.Is(err, kafkagroup.ErrCommitFenced) || errors.Is(err, kafkagroup.ErrMemberClosed) {
				return err
			}
		} else {
			err = c.commitZK(ctx, gen.zk.SessionID, changed)
			if errors.Is(err, ErrNotOwner) {
				return err
			}
		}
		if err == nil {
			for tp, off := range changed {
				c.checkpoint[tp] = off
			}
			c.log.Debug("committed offsets", "partitions", len(changed))
			return nil
		}
	}
	return err
}

// commitZK writes offsets to the offset store once the lease of session
// holds.
func (c *ConsumerConnector) commitZK(ctx context.Context, session int64, offsets map[zkutil.TopicPartition]int64) error {
	ctx = zkutil.InSession(ctx, session)
	if err := c.session.AwaitLease(ctx, session); err != nil {
		if errors.Is(err, zkutil.ErrSessionExpired) {
			return fmt.Errorf("%w: the ZooKeeper session that owned the partitions is gone", ErrNotOwner)
		}
		return fmt.Errorf("connector: commit: ownership not confirmed: %w", err)
	}
	return c.offsets.Commit(ctx, offsets)
}

// autoCommitLoop commits every auto.commit.interval.ms until Shutdown,
// which commits one last time itself.
func (c *ConsumerConnector) autoCommitLoop() {
	defer c.autoCommit.Done()
	ticker := time.NewTicker(c.cfg.AutoCommitInterval)
	defer ticker.Stop()
	for {
		select {
		case <-c.closing:
			return
		case <-ticker.C:
			ctx, cancel := context.WithTimeout(context.Background(), c.commitTimeout())
			if err := c.CommitOffsets(ctx); err != nil {
				c.report(fmt.Errorf("connector: auto-commit: %w", err))
			}
			cancel()
		}
	}
}
