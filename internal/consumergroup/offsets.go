package consumergroup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/backoff"
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
	var err error
	for attempt := 0; attempts <= 0 || attempt < attempts; attempt++ {
		if attempt > 0 && !backoff.Sleep(ctx, m.cfg.RetryBackoff) {
			return fmt.Errorf("consumergroup: commit offsets of group %s: %w", m.cfg.Group, errors.Join(err, context.Cause(ctx)))
		}
		if m.ctx.Err() != nil {
			return ErrMemberClosed
		}
		if cause := gen.Err(); cause != nil && !errors.Is(cause, ErrRebalanceStarted) {
			return fmt.Errorf("consumergroup: commit offsets of group %s: %w: %w", m.cfg.Group, ErrCommitFenced, cause)
		}
		var retry bool
		retry, err = m.commitOnce(ctx, gen, topics)
		if err == nil {
			return nil
		}
		if !retry {
			return fmt.Errorf("consumergroup: commit offsets of group %s: %w", m.cfg.Group, err)
		}
		m.log.Debug("commit failed; retrying", "err", err)
	}
	return fmt.Errorf("consumergroup: commit offsets of group %s: %w", m.cfg.Group, err)
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
	out := make(map[zkutil.TopicPartition]int64, len(tps))
	if len(tps) == 0 {
		return out, nil
	}
	req := &sarama.OffsetFetchRequest{Version: 5, ConsumerGroup: m.cfg.Group}
	for _, tp := range tps {
		req.AddPartition(tp.Topic, tp.Partition)
	}
	var err error
	for attempt := range commitAttempts {
		if attempt > 0 && !backoff.Sleep(ctx, m.cfg.RetryBackoff) {
			return nil, errors.Join(err, context.Cause(ctx))
		}
		if m.ctx.Err() != nil {
			return nil, ErrMemberClosed
		}
		var c *coordinator
		if c, err = m.coordinator(ctx); err != nil {
			if errors.Is(err, ErrFatal) {
				return nil, err
			}
			continue
		}
		var resp *sarama.OffsetFetchResponse
		if resp, err = c.fetch.FetchOffset(req); err != nil {
			m.dropCoordinator(c, err)
			continue
		}
		if resp.Err != sarama.ErrNoError {
			err = resp.Err
			if classify(int16(resp.Err)) == classMoved {
				m.dropCoordinator(c, err)
			}
			if classify(int16(resp.Err)) == classFatal {
				return nil, err
			}
			continue
		}
		for _, tp := range tps {
			blk := resp.GetBlock(tp.Topic, tp.Partition)
			switch {
			case blk == nil:
				out[tp] = zkutil.NoOffset
			case blk.Err == sarama.ErrNoError:
				out[tp] = max(blk.Offset, zkutil.NoOffset)
			default:
				err = fmt.Errorf("%s: %w", tp, blk.Err)
			}
		}
		if err == nil {
			return out, nil
		}
	}
	return nil, err
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
