package connector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/kafkagroup"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// CommitOffsets commits, for every partition this member owns, the offset
// after the last message the application consumed: a message counts as
// consumed once the application asks its stream for the next message or
// marks it (KafkaStream.MarkConsumed). Offsets that have not moved since the
// last commit are not written again.
//
// It returns nil once every owned partition's offset is committed (also
// when none had moved, or the generation gave this member no partition).
// When the member owns nothing it commits nothing and says why, as
// Assignment.Err does: ErrNotJoined before CreateMessageStreams,
// ErrRebalanceInProgress between generations (commit from the
// RebalanceListener to commit before partitions move), an error wrapping
// ErrRebalanceFailed after a rebalance that failed, one wrapping
// ErrOwnershipLost once the ZooKeeper session that claimed the partitions
// is gone (in Kafka mode: once the coordinator dropped the member), and
// ErrShutdown after Shutdown. Nothing is committed for partitions whose
// ownership is no longer certain. A failed write is tried again up to
// offsets.commit.max.retries times (see Config.OffsetsCommitMaxRetries);
// the last error is returned, in a *CommitError that names the offsets
// (a failed commit may still have been applied: see CommitError).
//
// In Kafka mode (zkconsumer.group.coordination=kafka) the commit carries
// the generation and member id, and the coordinator refuses it if this
// member's generation is no longer current (it was removed from the group,
// or the group has rebalanced since): the error then wraps
// ErrCommitFenced, and the next owner of the partitions consumes from the
// offsets committed before.
func (c *ConsumerConnector) CommitOffsets(ctx context.Context) error {
	gen, infos, err := c.ownership()
	if err != nil {
		return err
	}
	return c.commit(ctx, gen, consumedOffsetsOf(infos), 1+c.cfg.OffsetsCommitMaxRetries)
}

// CommitOffsetsMap commits explicit offsets (the next offset to consume) for
// partitions this member owns. Partitions it does not own in its current
// generation are refused with an error wrapping ErrNotOwner; the others
// are committed. When the member owns nothing, the error wraps ErrNotOwner
// and the reason, as CommitOffsets reports it (ErrRebalanceInProgress,
// ErrShutdown, ...). Retries are CommitOffsets'.
func (c *ConsumerConnector) CommitOffsetsMap(ctx context.Context, offsets map[TopicPartition]int64) error {
	gen, _, err := c.ownership()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotOwner, err)
	}
	var refused []error
	owned := map[TopicPartition]int64{}
	for tp, off := range offsets {
		if _, ok := gen.owned[tp]; !ok {
			refused = append(refused, fmt.Errorf("%w: %s", ErrNotOwner, tp))
			continue
		}
		owned[tp] = off
	}
	err = c.commit(ctx, gen, func() map[TopicPartition]int64 { return owned }, 1+c.cfg.OffsetsCommitMaxRetries)
	return errors.Join(append(refused, err)...)
}

// CommitMessages commits msgs, messages this member's streams handed out:
// for each of their partitions, the offset after the highest of its
// messages given (msg.Offset+1). It also marks them consumed
// (Message.MarkConsumed), so that no later commit writes less.
//
// It is the commit of worker pools and batches: the goroutine that has
// processed messages commits them with nothing but the messages, and
// never more than them. With auto.commit.enable=true the connector also
// commits, on its own, what the streams count as consumed (every message
// before the one last handed out), processed or not; a pool that hands
// messages to workers commits only what they finished when it sets
// auto.commit.enable=false and commits with CommitMessages, also from the
// RebalanceListener before its partitions move (see docs/consuming.md,
// "Worker pools and ordered parallel processing").
//
// A partition's commit never moves back: messages at or below the offset
// this member last committed for it, or read when it was assigned, are
// left out (workers finishing out of order cannot undo each other's
// commits; CommitOffsetsMap can set any offset). A message of a partition
// this member no longer owns (a rebalance gave it to another member since
// the message was handed out, even if it came back), or that no stream of
// this connector handed out, is refused with an error wrapping ErrNotOwner
// that names it; the others are committed. When the member owns nothing,
// the error wraps ErrNotOwner and the reason, as CommitOffsetsMap's does.
// Retries are CommitOffsets'.
func (c *ConsumerConnector) CommitMessages(ctx context.Context, msgs ...*Message) error {
	gen, infos, err := c.ownership()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotOwner, err)
	}
	next := map[TopicPartition]int64{}
	refused := map[TopicPartition][]int64{}
	for _, m := range msgs {
		if m == nil {
			continue
		}
		tp := TopicPartition{Topic: m.Topic, Partition: m.Partition}
		if info := streamcore.PartitionOf(m); info == nil || infos[tp] != info || info.Revoked() {
			refused[tp] = append(refused[tp], m.Offset)
			continue
		}
		streamcore.MarkConsumed(m)
		next[tp] = max(next[tp], m.Offset+1)
	}
	var errs []error
	for _, tp := range slices.SortedFunc(maps.Keys(refused), compareTP) {
		offsets := refused[tp]
		errs = append(errs, fmt.Errorf("%w: %s, offsets %v: not handed out by this member's streams in its current ownership of the partition", ErrNotOwner, tp, offsets))
	}
	if len(next) > 0 {
		errs = append(errs, c.commit(ctx, gen, func() map[TopicPartition]int64 {
			// Called under commitMu, which guards checkpoint.
			forward := make(map[TopicPartition]int64, len(next))
			for tp, off := range next {
				if last, ok := c.checkpoint[tp]; !ok || off > last {
					forward[tp] = off
				}
			}
			return forward
		}, 1+c.cfg.OffsetsCommitMaxRetries))
	}
	return errors.Join(errs...)
}

// consumedOffsetsOf returns a function that reads the consumed offset of
// each of infos when called. Commits call it once they hold commitMu, so
// that what they write is never older than what a commit that ran before
// them wrote (a final commit at a revoke, say).
func consumedOffsetsOf(infos map[TopicPartition]*streamcore.PartitionTopicInfo) func() map[TopicPartition]int64 {
	return func() map[TopicPartition]int64 {
		offsets := make(map[TopicPartition]int64, len(infos))
		for tp, info := range infos {
			offsets[tp] = info.ConsumedOffset()
		}
		return offsets
	}
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
func (c *ConsumerConnector) commitInfos(ctx context.Context, gen *generation, infos map[zkutil.TopicPartition]*streamcore.PartitionTopicInfo, attempts int) error {
	err := c.commit(ctx, gen, consumedOffsetsOf(infos), attempts)
	if errors.Is(err, ErrNotOwner) {
		return nil // the session that owned them is gone; the member reports the loss
	}
	return err
}

// commit writes the offsets that changed since the last commit as a member
// of gen. In ZooKeeper mode that is while the lease of the session that
// owns the partitions holds: each write is made through the session's
// zksession.Bound, so none is applied after the session is gone, and a
// commit to Kafka is made only while the lease holds. In Kafka mode the
// coordinator checks gen's generation and member id itself. offsets is
// called under commitMu (see commitChanged).
func (c *ConsumerConnector) commit(ctx context.Context, gen *generation, offsets func() map[zkutil.TopicPartition]int64, attempts int) error {
	return c.commitChanged(offsets, func(changed map[zkutil.TopicPartition]int64) error {
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
				err = c.kafka.commit(ctx, gen.kafka, changed, false)
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
				return nil
			}
		}
		return err
	})
}

// commitLast is the commit of gen's consumed offsets when its partitions
// are given up (revoke: a rebalance, or Shutdown). In ZooKeeper mode it is
// one try of commitInfos. In Kafka mode it is tried, as Java's consumer
// does, until ctx ends (the rebalance timeout), or, on Shutdown, for at
// most closeCommitTimeout and Shutdown's context: every retriable
// coordinator error, a move of the coordinator included, is retried, and
// a refusal of the generation ends it (see kafkagroup.Member.CommitFinal).
func (c *ConsumerConnector) commitLast(ctx context.Context, gen *generation, infos map[zkutil.TopicPartition]*streamcore.PartitionTopicInfo) error {
	if gen.kafka == nil {
		// A commit to Kafka is cut off when the ZooKeeper lease lapses
		// while it is in flight (coordinator.ErrFenced), but a lease
		// lapses while its session may live on: a member cut off from
		// ZooKeeper for less than the session timeout, or one whose
		// reconnection was granted from a connect request held back by
		// the network, so that the lease runs out again shortly after,
		// until a ping renews it. The last commit waits for the lease to
		// hold again and is made again, for up to the session timeout,
		// after which the session has either come back or expired (an
		// expired one's partitions are no longer this member's:
		// ErrNotOwner, nothing to commit).
		err := c.commitInfos(ctx, gen, infos, 1)
		until := time.Now().Add(c.cfg.ZooKeeperSessionTimeout)
		for errors.Is(err, coordinator.ErrFenced) && c.awaitLease(ctx, gen, until) {
			c.log.Info("the last commit was cut off by a lapsed lease; committing again", "generation", gen.id)
			err = c.commitInfos(ctx, gen, infos, 1)
		}
		return err
	}
	return c.commitChanged(consumedOffsetsOf(infos), func(changed map[zkutil.TopicPartition]int64) error {
		return c.kafka.commit(ctx, gen.kafka, changed, true)
	})
}

// awaitLease waits, within ctx and until until, for gen's lease to hold
// again; it reports whether it does.
func (c *ConsumerConnector) awaitLease(ctx context.Context, gen *generation, until time.Time) bool {
	timeout := time.NewTimer(time.Until(until))
	defer timeout.Stop()
	for {
		changed := gen.fence.Changed()
		if gen.fence.Held() {
			return true
		}
		select {
		case <-changed:
		case <-timeout.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// commitChanged writes, with write, the offsets that changed since the last
// commit, and records them as committed if write succeeds. Commits run one
// at a time, under commitMu; offsets is called once the lock is held.
//
// Only partitions this member may still commit are written (c.committable):
// a partition leaves that set, under commitMu, when its revoke is done and
// before its owner node is released, so a commit that was started for it
// earlier (an automatic commit, the application's CommitOffsets from
// another goroutine) either lands before the release or not at all, and
// never over the offsets of the partition's next owner.
func (c *ConsumerConnector) commitChanged(offsets func() map[zkutil.TopicPartition]int64, write func(map[zkutil.TopicPartition]int64) error) error {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	changed := map[zkutil.TopicPartition]int64{}
	for tp, off := range offsets() {
		if off < 0 {
			continue // nothing consumed and no position yet
		}
		if !c.committable[tp] {
			continue // released, or being released with its final commit done
		}
		if last, ok := c.checkpoint[tp]; ok && last == off {
			continue
		}
		changed[tp] = off
	}
	if len(changed) == 0 {
		return nil
	}
	if err := write(changed); err != nil {
		return &CommitError{Offsets: changed, Err: err}
	}
	for tp, off := range changed {
		c.checkpoint[tp] = off
	}
	c.log.Debug("committed offsets", "partitions", len(changed))
	return nil
}

// commitZK writes offsets to the offset store once the lease of session
// holds.
func (c *ConsumerConnector) commitZK(ctx context.Context, session int64, offsets map[zkutil.TopicPartition]int64) error {
	in := c.session.Bind(session)
	if err := in.AwaitLease(ctx); err != nil {
		if errors.Is(err, zksession.ErrSessionExpired) {
			return fmt.Errorf("%w (%w): the ZooKeeper session that owned the partitions is gone", ErrOwnershipLost, ErrNotOwner)
		}
		return fmt.Errorf("connector: commit: ownership not confirmed: %w", err)
	}
	// Kafka does not fence commits from outside a group: the lease does.
	// Each attempt goes out only while it holds, and one unanswered when
	// it lapses is cut off (offsets.storage=kafka).
	return c.offsets.Commit(ctx, in, offsets)
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
			gen, infos, err := c.ownership()
			if err != nil {
				continue // nothing owned: nothing to commit
			}
			ctx, cancel := context.WithTimeout(context.Background(), c.commitTimeout())
			err = c.commitInfos(ctx, gen, infos, 1+c.cfg.OffsetsCommitMaxRetries)
			switch {
			case err == nil:
			case gen.kafka != nil && errors.Is(err, kafkagroup.ErrCommitFenced) && errors.Is(gen.kafka.Err(), kafkagroup.ErrRebalanceStarted):
				// The commit raced the member's rejoin (Kafka mode): the
				// next commit covers the offsets.
				c.log.Debug("auto-commit refused during a rebalance", "generation", gen.id, "err", err)
			default:
				c.report(underOnce(ErrAutoCommit, err))
			}
			cancel()
		}
	}
}
