package consumergroup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/IBM/sarama"

	gc "github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/grouperr"
	"github.com/zkconsumer/zkconsumer/internal/kip848"
	"github.com/zkconsumer/zkconsumer/internal/offsetfetch"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// commitAttempts bounds the tries of Commit and Fetch.
const commitAttempts = 4

// Commit stores offsets (the next offset to consume, per partition) for
// the group as a member of gen, with OffsetCommit v9 carrying the member
// id and the member's latest epoch: the coordinator refuses it once the
// member was fenced (the error wraps ErrCommitFenced, and gen ends with
// ErrMembershipLost). An epoch that moved on meanwhile
// (STALE_MEMBER_EPOCH) and coordinator errors are retried a few times,
// RetryBackoff apart, within ctx. It is allowed after gen ended with
// ErrRebalanceStarted, until the next Join.
func (m *Member) Commit(ctx context.Context, gen *Generation, offsets map[zkutil.TopicPartition]int64) error {
	return m.commit(ctx, gen, offsets, commitAttempts)
}

// CommitFinal is Commit for gen's last commit (on revoke, before Close):
// it retries every retriable error until ctx ends.
func (m *Member) CommitFinal(ctx context.Context, gen *Generation, offsets map[zkutil.TopicPartition]int64) error {
	return m.commit(ctx, gen, offsets, 0)
}

func (m *Member) commit(ctx context.Context, gen *Generation, offsets map[zkutil.TopicPartition]int64, attempts int) error {
	if len(offsets) == 0 {
		return nil
	}
	byTopic := map[string][]kip848.CommitPartition{}
	for tp, off := range offsets {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], kip848.CommitPartition{Partition: tp.Partition, Offset: off, LeaderEpoch: -1})
	}
	var topics []kip848.CommitTopic
	for _, t := range slices.Sorted(maps.Keys(byTopic)) {
		topics = append(topics, kip848.CommitTopic{Name: t, Partitions: byTopic[t]})
	}
	err := gc.Retry(ctx, attempts, m.cfg.RetryBackoff, func() error {
		if m.ctx.Err() != nil {
			return gc.Permanent(ErrMemberClosed)
		}
		if cause := gen.Err(); cause != nil && !errors.Is(cause, ErrRebalanceStarted) {
			return gc.Permanent(fmt.Errorf("%w: %w", ErrCommitFenced, cause))
		}
		retry, err := m.commitOnce(ctx, gen, topics)
		if err != nil && retry {
			m.log.Debug("commit failed; retrying", "err", err)
			return err
		}
		return gc.Permanent(err)
	})
	switch {
	case errors.Is(err, ErrMemberClosed) && m.ctx.Err() != nil:
		return ErrMemberClosed
	case err != nil:
		return fmt.Errorf("consumergroup: commit offsets of group %s: %w", m.cfg.Group, err)
	}
	return nil
}

// commitOnce sends one OffsetCommit; retry tells whether repeating it may
// succeed.
func (m *Member) commitOnce(ctx context.Context, gen *Generation, topics []kip848.CommitTopic) (retry bool, err error) {
	c, err := m.coordinator(ctx)
	if err != nil {
		return !errors.Is(err, ErrFatal), err
	}
	m.mu.Lock()
	epoch, id := m.epoch, m.memberID
	m.mu.Unlock()
	if epoch <= 0 {
		return false, fmt.Errorf("%w: the member is not in the group", ErrCommitFenced)
	}
	resp, err := c.conn.OffsetCommit(ctx, &kip848.OffsetCommitRequest{GroupID: m.cfg.Group, MemberEpoch: epoch,
		MemberID: id, GroupInstanceID: m.instanceID(), Topics: topics})
	if err != nil {
		m.dropCoordinator(c, err)
		return true, err
	}
	var errs []error
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 {
				continue
			}
			kerr := kafkaError(p.ErrorCode, nil)
			switch {
			case p.ErrorCode == codeStaleMemberEpoch:
				return true, kerr // a heartbeat moved the epoch on; repeat with it
			case grouperr.Fenced(sarama.KError(p.ErrorCode)):
				m.fenced(c)
				gen.end(fmt.Errorf("%w: OffsetCommit: %w", ErrMembershipLost, kerr))
				return false, fmt.Errorf("%w (epoch %d, member %s): %w", ErrCommitFenced, epoch, id, kerr)
			case classify(p.ErrorCode) == classMoved:
				m.dropCoordinator(c, kerr)
				return true, kerr
			case grouperr.CoordinatorSuspect(sarama.KError(p.ErrorCode)):
				m.recheckCoordinator()
				return true, kerr
			case classify(p.ErrorCode) == classRetry:
				return true, kerr
			default:
				errs = append(errs, fmt.Errorf("%s: %w", zkutil.TopicPartition{Topic: t.Name, Partition: p.Partition}, kerr))
			}
		}
	}
	return false, errors.Join(errs...)
}

// Fetch returns the group's committed offset of each partition,
// zkutil.NoOffset where there is none (OffsetFetch, which needs no
// membership), an answer of "none" confirmed as internal/offsetfetch
// describes.
func (m *Member) Fetch(ctx context.Context, tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, error) {
	out, err := offsetfetch.Confirmed(ctx, tps, m.cfg.RetryBackoff,
		func(tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, error) { return m.fetch(ctx, tps) },
		m.recheckCoordinator)
	if err != nil {
		return nil, fmt.Errorf("consumergroup: fetch offsets of group %s: %w", m.cfg.Group, err)
	}
	return out, nil
}

func (m *Member) fetch(ctx context.Context, tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, error) {
	if len(tps) == 0 {
		return map[zkutil.TopicPartition]int64{}, nil
	}
	var out map[zkutil.TopicPartition]int64
	err := gc.Retry(ctx, commitAttempts, m.cfg.RetryBackoff, func() error {
		if m.ctx.Err() != nil {
			return gc.Permanent(ErrMemberClosed)
		}
		c, err := m.coordinator(ctx)
		if errors.Is(err, ErrFatal) {
			return gc.Permanent(err)
		}
		if err != nil {
			return err
		}
		resp, err := c.fetch.FetchOffset(gc.OffsetFetchRequest(c.fetchVersion, m.cfg.Group, tps))
		if err != nil {
			m.dropCoordinator(c, err)
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

// recheckCoordinator looks the coordinator up again, dropping the current
// one if another broker holds the group now.
func (m *Member) recheckCoordinator() {
	m.coordMu.Lock()
	c := m.coord
	m.coordMu.Unlock()
	if c == nil {
		return
	}
	found, err := m.findCoordinator()
	if err == nil && (found.ID() != c.id || found.Addr() != c.addr) {
		m.dropCoordinator(c, fmt.Errorf("the coordinator is now broker %d", found.ID()))
	}
}
