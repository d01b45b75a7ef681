package kafkagroup

import (
	"context"
	"errors"
	"fmt"

	"github.com/IBM/sarama"

	gc "github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/grouperr"
	"github.com/zkconsumer/zkconsumer/internal/offsetfetch"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// commitAttempts bounds the tries of Commit and Fetch after coordinator
// errors.
const commitAttempts = 4

// Commit stores offsets (the next offset to consume, per partition) for
// the group as a member of gen: OffsetCommit carries gen's id and member
// id (and group.instance.id), so the coordinator refuses it once gen is
// no longer current; Commit then returns an error wrapping ErrCommitFenced
// and the Kafka error, and ends gen as the refusal says (see
// ErrCommitFenced), so that its lease ends at once rather than at the next
// heartbeat. It is allowed after gen ended with ErrRebalanceStarted, until
// this member rejoins. Coordinator errors are retried a few times,
// RetryBackoff apart, within ctx; each request waits at most
// RequestTimeout, and no longer than ctx.
func (m *Member) Commit(ctx context.Context, gen *Generation, offsets map[zkutil.TopicPartition]int64) error {
	return m.commit(ctx, gen, offsets, commitAttempts)
}

// CommitFinal is Commit for gen's last commit before its partitions are
// given up: after gen ended with ErrRebalanceStarted, and before Close. As
// Java's consumer does with its commits on revoke (until the rebalance
// timeout) and on close (until the close timeout), it repeats the commit
// after every retriable error, for as long as ctx lasts: the coordinator
// moved, is not available or its connection was lost (it is looked up
// again with FindCoordinator), it is loading the group, or the request
// timed out; RetryBackoff apart. It stops at once when the coordinator
// refuses the generation (ErrCommitFenced: ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS), at any
// other error, and when the member is closed. Give it a ctx with a
// deadline.
func (m *Member) CommitFinal(ctx context.Context, gen *Generation, offsets map[zkutil.TopicPartition]int64) error {
	return m.commit(ctx, gen, offsets, 0)
}

// commit runs OffsetCommit for gen, with up to attempts tries (0: until
// ctx ends).
func (m *Member) commit(ctx context.Context, gen *Generation, offsets map[zkutil.TopicPartition]int64, attempts int) error {
	if len(offsets) == 0 {
		return nil
	}
	commitRequest := func(c *coordinator) *sarama.OffsetCommitRequest {
		req := &sarama.OffsetCommitRequest{
			Version:                 c.version(gc.APIOffsetCommit),
			ConsumerGroup:           m.cfg.Group,
			ConsumerGroupGeneration: gen.ID,
			ConsumerID:              gen.MemberID,
			GroupInstanceId:         m.instanceID(),
			RetentionTime:           -1,
		}
		for tp, off := range offsets {
			// Leader epoch -1: unknown, so Java members never take it for
			// a truncation.
			req.AddBlockWithLeaderEpoch(tp.Topic, tp.Partition, off, -1, 0, "")
		}
		return req
	}
	err := m.retry(ctx, attempts, func(c *coordinator) error {
		req := commitRequest(c)
		resp, err := withAbort(ctx, c.ctrlT, func() (*sarama.OffsetCommitResponse, error) { return c.ctrl.CommitOffset(req) })
		if err != nil {
			m.connectionFailed(c, err)
			return err
		}
		var errs []error
		for topic, parts := range resp.Errors {
			for p, kerr := range parts {
				switch {
				case kerr == sarama.ErrNoError:
				case grouperr.Fenced(kerr):
					m.commitRefused(gen, kerr)
					return gc.Permanent(fmt.Errorf("%w (generation %d, member %s): %w", ErrCommitFenced, gen.ID, gen.MemberID, kerr))
				case grouperr.Retriable(kerr):
					if grouperr.CoordinatorMoved(kerr) {
						m.dropCoordinator(c, kerr)
					} else if grouperr.CoordinatorSuspect(kerr) {
						m.recheckCoordinator()
					}
					return kerr
				default:
					errs = append(errs, fmt.Errorf("%s: %w", zkutil.TopicPartition{Topic: topic, Partition: p}, kerr))
				}
			}
		}
		return gc.Permanent(errors.Join(errs...))
	})
	if err != nil {
		return fmt.Errorf("kafkagroup: commit offsets of group %s: %w", m.cfg.Group, err)
	}
	return nil
}

// commitRefused ends gen as the coordinator's refusal of its commit says:
// another instance took the group.instance.id over (fatal), the member or
// its generation is unknown (membership lost; not while the member
// rejoins from gen or once it has joined a later generation, which makes
// gen's commit stale), or the group is rebalancing. The first two end its lease at once: the member learns it
// was fenced from the commit, and hands out no message more.
func (m *Member) commitRefused(gen *Generation, kerr sarama.KError) {
	why := fmt.Errorf("OffsetCommit: %w", kerr)
	switch kerr {
	case sarama.ErrFencedInstancedId:
		gen.end(m.setFatal(why))
	case sarama.ErrUnknownMemberId:
		m.forgetMemberID(gen.MemberID)
		m.lost(gen, why)
	case sarama.ErrIllegalGeneration:
		m.mu.Lock()
		stale := m.joinedGen > gen.ID || m.rejoining == gen
		m.mu.Unlock()
		if stale {
			// The member is rejoining from gen, or has joined a later
			// generation since: the commit was merely late, as Java's
			// consumer takes it (a RebalanceInProgressException, no
			// reset); Join finds out whether the coordinator still
			// counts the member. Under the cooperative protocol gen's
			// partitions are still this member's meanwhile.
			return
		}
		m.lost(gen, why)
	case sarama.ErrRebalanceInProgress:
		if gen.Err() == nil {
			m.log.Info("group is rebalancing", "generation", gen.ID)
		}
		gen.end(ErrRebalanceStarted)
	}
}

// Fetch returns the group's committed offset of each partition,
// zkutil.NoOffset where there is none (OffsetFetch; it needs no
// membership). Coordinator errors are retried as in Commit.
//
// An answer of "no committed offset" is confirmed by a second OffsetFetch
// of those partitions, after the coordinator is looked up again (see
// internal/offsetfetch): a coordinator that resigns while it answers says
// "none", without an error, for a group that has offsets; taken at face
// value, the partition's new owner would start from auto.offset.reset.
func (m *Member) Fetch(ctx context.Context, tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, error) {
	out, err := offsetfetch.Confirmed(ctx, tps, m.cfg.RetryBackoff,
		func(tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, error) { return m.fetch(ctx, tps) },
		m.recheckCoordinator)
	if err != nil {
		return nil, fmt.Errorf("kafkagroup: fetch offsets of group %s: %w", m.cfg.Group, err)
	}
	return out, nil
}

// fetch is one OffsetFetch of tps, retried on coordinator errors (an
// error of a single partition fails it).
func (m *Member) fetch(ctx context.Context, tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, error) {
	if len(tps) == 0 {
		return map[zkutil.TopicPartition]int64{}, nil
	}
	var out map[zkutil.TopicPartition]int64
	err := m.retry(ctx, commitAttempts, func(c *coordinator) error {
		req := gc.OffsetFetchRequest(c.version(gc.APIOffsetFetch), m.cfg.Group, tps)
		resp, err := withAbort(ctx, c.ctrlT, func() (*sarama.OffsetFetchResponse, error) { return c.ctrl.FetchOffset(req) })
		if err != nil {
			m.connectionFailed(c, err)
			return err
		}
		got, failed, err := gc.ReadOffsets(resp, tps)
		if err != nil {
			if gc.Moved(err) {
				m.dropCoordinator(c, err)
			}
			return err
		}
		out = got
		return gc.Permanent(gc.PartitionErrors(tps, failed))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// retry runs op against the coordinator, finding it first, under the
// shared rule (gc.Retry): up to attempts times (0: until ctx ends),
// RetryBackoff apart, within ctx; not after Close, nor after an ErrFatal
// error finding or connecting the coordinator.
func (m *Member) retry(ctx context.Context, attempts int, op func(*coordinator) error) error {
	return gc.Retry(ctx, attempts, m.cfg.RetryBackoff, func() error {
		if m.ctx.Err() != nil {
			return gc.Permanent(ErrMemberClosed)
		}
		c, err := m.coordinator()
		if errors.Is(err, ErrFatal) || errors.Is(err, ErrMemberClosed) {
			return gc.Permanent(err)
		}
		if err != nil {
			return err
		}
		return op(c)
	})
}
