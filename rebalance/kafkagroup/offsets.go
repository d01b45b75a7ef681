package kafkagroup

import (
	"context"
	"errors"
	"fmt"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/backoff"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// commitAttempts bounds the tries of Commit and Fetch after coordinator
// errors.
const commitAttempts = 4

// Commit stores offsets (the next offset to consume, per partition) for
// the group as a member of gen: OffsetCommit carries gen's id and member
// id (and group.instance.id), so the coordinator refuses it once gen is
// no longer current; Commit then returns an error wrapping ErrCommitFenced
// and the Kafka error. It is allowed after gen ended with
// ErrRebalanceStarted, until this member rejoins. Coordinator errors are
// retried a few times, RetryBackoff apart, within ctx; each request waits
// at most RequestTimeout.
func (m *Member) Commit(ctx context.Context, gen *Generation, offsets map[zkutil.TopicPartition]int64) error {
	if len(offsets) == 0 {
		return nil
	}
	req := &sarama.OffsetCommitRequest{
		Version:                 7,
		ConsumerGroup:           m.cfg.Group,
		ConsumerGroupGeneration: gen.ID,
		ConsumerID:              gen.MemberID,
		GroupInstanceId:         m.instanceID(),
		RetentionTime:           -1,
	}
	for tp, off := range offsets {
		// Leader epoch -1: unknown, so Java members never take it for a
		// truncation.
		req.AddBlockWithLeaderEpoch(tp.Topic, tp.Partition, off, -1, 0, "")
	}
	err := m.retry(ctx, func(c *coordinator) error {
		resp, err := c.ctrl.CommitOffset(req)
		if err != nil {
			m.connectionFailed(c, err)
			return err
		}
		var errs []error
		for topic, parts := range resp.Errors {
			for p, kerr := range parts {
				switch kerr {
				case sarama.ErrNoError:
				case sarama.ErrIllegalGeneration, sarama.ErrUnknownMemberId, sarama.ErrFencedInstancedId, sarama.ErrRebalanceInProgress:
					return fmt.Errorf("%w (generation %d, member %s): %w", ErrCommitFenced, gen.ID, gen.MemberID, kerr)
				case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable, sarama.ErrOffsetsLoadInProgress, sarama.ErrRequestTimedOut:
					if kerr != sarama.ErrOffsetsLoadInProgress && kerr != sarama.ErrRequestTimedOut {
						m.dropCoordinator(c, kerr)
					}
					return kerr
				default:
					errs = append(errs, fmt.Errorf("%s: %w", zkutil.TopicPartition{Topic: topic, Partition: p}, kerr))
				}
			}
		}
		return permanent(errors.Join(errs...))
	})
	if err != nil {
		return fmt.Errorf("kafkagroup: commit offsets of group %s: %w", m.cfg.Group, err)
	}
	return nil
}

// Fetch returns the group's committed offset of each partition,
// zkutil.NoOffset where there is none (OffsetFetch; it needs no
// membership). Coordinator errors are retried as in Commit.
func (m *Member) Fetch(ctx context.Context, tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, error) {
	out := make(map[zkutil.TopicPartition]int64, len(tps))
	if len(tps) == 0 {
		return out, nil
	}
	req := &sarama.OffsetFetchRequest{Version: 5, ConsumerGroup: m.cfg.Group}
	for _, tp := range tps {
		req.AddPartition(tp.Topic, tp.Partition)
	}
	err := m.retry(ctx, func(c *coordinator) error {
		resp, err := c.ctrl.FetchOffset(req)
		if err != nil {
			m.connectionFailed(c, err)
			return err
		}
		if err := m.fetchError(c, resp.Err); err != nil {
			return err
		}
		for _, tp := range tps {
			blk := resp.GetBlock(tp.Topic, tp.Partition)
			switch {
			case blk == nil:
				out[tp] = zkutil.NoOffset
			case blk.Err == sarama.ErrNoError:
				out[tp] = max(blk.Offset, zkutil.NoOffset)
			default:
				if err := m.fetchError(c, blk.Err); err != nil {
					return fmt.Errorf("%s: %w", tp, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kafkagroup: fetch offsets of group %s: %w", m.cfg.Group, err)
	}
	return out, nil
}

// fetchError sorts an OffsetFetch error: nil for none, retriable
// coordinator errors as they are, anything else permanent.
func (m *Member) fetchError(c *coordinator, kerr sarama.KError) error {
	switch kerr {
	case sarama.ErrNoError:
		return nil
	case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable:
		m.dropCoordinator(c, kerr)
		return kerr
	case sarama.ErrOffsetsLoadInProgress, sarama.ErrRequestTimedOut:
		return kerr
	}
	return permanent(kerr)
}

// permanentError marks an error retry must not repeat.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

func permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// retry runs op against the coordinator up to commitAttempts times while
// it fails with retriable errors, RetryBackoff apart, within ctx.
func (m *Member) retry(ctx context.Context, op func(*coordinator) error) error {
	var err error
	for attempt := 0; attempt < commitAttempts; attempt++ {
		if attempt > 0 && !backoff.Sleep(ctx, m.cfg.RetryBackoff) {
			return errors.Join(err, context.Cause(ctx))
		}
		if m.ctx.Err() != nil {
			return ErrMemberClosed
		}
		var c *coordinator
		if c, err = m.coordinator(); err == nil {
			err = op(c)
		}
		var p permanentError
		switch {
		case errors.As(err, &p):
			return p.err
		case err == nil || errors.Is(err, ErrCommitFenced):
			return err
		}
	}
	return err
}
