package kafkagroup

import (
	"context"
	"errors"
	"fmt"

	"github.com/IBM/sarama"

	gc "github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/offsetfetch"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// commitAttempts bounds the tries of Commit and Fetch after coordinator
// errors.
const commitAttempts = 4

// Commit stores offsets (the next offset to consume, per partition) for
// the group as a member of gen. OffsetCommit carries the membership (the
// classic protocol's generation id, member id and group.instance.id; the
// consumer protocol's member id and latest member epoch), so the
// coordinator refuses it once gen is no longer current: Commit then
// returns an error wrapping ErrCommitFenced and the Kafka error, and ends
// gen as the refusal says (see ErrCommitFenced), so that its lease ends at
// once rather than at the next heartbeat. It is allowed after gen ended
// with ErrRebalanceStarted, until this member rejoins. Coordinator errors
// (and, consumer protocol, an epoch that moved on meanwhile) are retried a
// few times, RetryBackoff apart, within ctx; each request waits at most
// RequestTimeout, and no longer than ctx.
func (m *Member) Commit(ctx context.Context, gen *Generation, offsets map[zkutil.TopicPartition]int64) error {
	return m.commit(ctx, gen, offsets, commitAttempts)
}

// CommitFinal is Commit for gen's last commit before its partitions are
// given up: after gen ended with ErrRebalanceStarted, on revoke, and
// before Close. As Java's consumer does with its commits on revoke (until
// the rebalance timeout) and on close (until the close timeout), it
// repeats the commit after every retriable error, for as long as ctx
// lasts: the coordinator moved, is not available or its connection was
// lost (it is looked up again with FindCoordinator), it is loading the
// group, or the request timed out; RetryBackoff apart. It stops at once
// when the coordinator refuses the membership (ErrCommitFenced), at any
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
	err := m.retry(ctx, attempts, func(c *coordinator) error {
		retry, err := m.proto.commitOnce(ctx, c, gen, offsets)
		if err != nil && retry {
			m.log.Debug("commit failed; retrying", "err", err)
			return err
		}
		return gc.Permanent(err)
	})
	if err != nil {
		return fmt.Errorf("commit offsets of group %s: %w", m.cfg.Group, err)
	}
	return nil
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
		return nil, fmt.Errorf("fetch offsets of group %s: %w", m.cfg.Group, err)
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
		req := gc.OffsetFetchRequest(c.fetchVersion, m.cfg.Group, tps)
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
		c, err := m.coordinator(ctx)
		if errors.Is(err, ErrFatal) || errors.Is(err, ErrMemberClosed) {
			return gc.Permanent(err)
		}
		if err != nil {
			return err
		}
		return op(c)
	})
}
