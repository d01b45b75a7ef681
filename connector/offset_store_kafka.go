package connector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// kafkaOffsetStore keeps offsets in Kafka's __consumer_offsets through the
// group coordinator, Kafka's offsets.storage=kafka. Like the Scala consumer
// it commits without group membership: generation -1 and no member id, which
// brokers accept for groups that have no Kafka-coordinated members.
type kafkaOffsetStore struct {
	group     string
	retries   int
	backoff   time.Duration
	newClient func() (sarama.Client, error)
	mu        sync.Mutex
	client    sarama.Client
}

func (s *kafkaOffsetStore) coordinator() (*sarama.Broker, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil || s.client.Closed() {
		c, err := s.newClient()
		if err != nil {
			return nil, fmt.Errorf("connector: offsets.storage=kafka: %w", err)
		}
		s.client = c
	}
	b, err := s.client.Coordinator(s.group)
	if err != nil {
		return nil, fmt.Errorf("connector: group coordinator of %s: %w", s.group, err)
	}
	return b, nil
}

func (s *kafkaOffsetStore) refresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client != nil {
		_ = s.client.RefreshCoordinator(s.group)
	}
}

// retry runs op until it succeeds, fails for good, or retries run out,
// re-discovering the coordinator after coordinator errors.
func (s *kafkaOffsetStore) retry(ctx context.Context, op func(*sarama.Broker) error) error {
	var err error
	for attempt := 0; attempt <= s.retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return errors.Join(err, ctx.Err())
			case <-time.After(s.backoff):
			}
		}
		var b *sarama.Broker
		if b, err = s.coordinator(); err == nil {
			if err = op(b); err == nil {
				return nil
			}
		}
		var kerr sarama.KError
		if errors.As(err, &kerr) && !coordinatorError(kerr) {
			return err
		}
		s.refresh()
	}
	return err
}

func (s *kafkaOffsetStore) Fetch(ctx context.Context, tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, map[zkutil.TopicPartition]error, error) {
	out := make(map[zkutil.TopicPartition]int64, len(tps))
	var unreadable map[zkutil.TopicPartition]error
	if len(tps) == 0 {
		return out, nil, nil
	}
	err := s.retry(ctx, func(b *sarama.Broker) error {
		clear(out)
		unreadable = nil
		req := &sarama.OffsetFetchRequest{Version: 1, ConsumerGroup: s.group}
		for _, tp := range tps {
			req.AddPartition(tp.Topic, tp.Partition)
		}
		resp, err := b.FetchOffset(req)
		if err != nil {
			return err
		}
		if resp.Err != sarama.ErrNoError {
			return resp.Err
		}
		for _, tp := range tps {
			blk := resp.GetBlock(tp.Topic, tp.Partition)
			switch {
			case blk == nil:
				out[tp] = zkutil.NoOffset
			case blk.Err == sarama.ErrNoError:
				out[tp] = blk.Offset // -1 when the group has none
			case coordinatorError(blk.Err):
				// Version 1 reports coordinator errors per partition;
				// they concern the whole request, which is retried.
				return blk.Err
			default:
				unreadable = addUnreadable(unreadable, tp, fmt.Errorf("connector: committed offset of %s in Kafka (group %s): %w", tp, s.group, blk.Err))
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("connector: fetch offsets of %s from Kafka: %w", s.group, err)
	}
	return out, unreadable, nil
}

// coordinatorError reports the errors after which a request is retried,
// with the coordinator looked up again.
func coordinatorError(kerr sarama.KError) bool {
	switch kerr {
	case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable,
		sarama.ErrOffsetsLoadInProgress, sarama.ErrRequestTimedOut:
		return true
	}
	return false
}

func (s *kafkaOffsetStore) Commit(ctx context.Context, offsets map[zkutil.TopicPartition]int64) error {
	if len(offsets) == 0 {
		return nil
	}
	err := s.retry(ctx, func(b *sarama.Broker) error {
		req := &sarama.OffsetCommitRequest{
			Version:                 2,
			ConsumerGroup:           s.group,
			ConsumerGroupGeneration: sarama.GroupGenerationUndefined,
			ConsumerID:              "",
			RetentionTime:           -1,
		}
		for tp, off := range offsets {
			req.AddBlock(tp.Topic, tp.Partition, off, 0, "")
		}
		resp, err := b.CommitOffset(req)
		if err != nil {
			return err
		}
		for topic, parts := range resp.Errors {
			for p, kerr := range parts {
				if kerr != sarama.ErrNoError {
					return fmt.Errorf("%s-%d: %w", topic, p, kerr)
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("connector: commit offsets of %s to Kafka: %w", s.group, err)
	}
	return nil
}

func (s *kafkaOffsetStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client != nil {
		err := s.client.Close()
		s.client = nil
		return err
	}
	return nil
}
