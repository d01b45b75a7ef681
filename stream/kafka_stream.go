package stream

import (
	"context"
	"iter"
	"time"
)

// KafkaStream is one stream of messages handed to the application (Kafka's
// KafkaStream): a bounded queue that fetchers fill with the chunks of the
// partitions assigned to the stream, and the single ConsumerIterator that
// drains it.
//
// Iterate it from one goroutine at a time, with Next, Messages or the
// Iterator. Clear, Shutdown and MarkConsumed are safe from any goroutine.
type KafkaStream struct {
	queue *ChunkQueue
	iter  *ConsumerIterator
}

// NewKafkaStream returns a stream whose queue holds at most queueCapacity
// chunks (Kafka's queued.max.message.chunks, default 2; at least 1) and
// whose iterator waits at most consumerTimeout for a chunk before returning
// ErrConsumerTimeout (Kafka's consumer.timeout.ms, default -1: a negative
// value waits for ever; zero never waits).
func NewKafkaStream(queueCapacity int, consumerTimeout time.Duration) (*KafkaStream, error) {
	q, err := NewChunkQueue(queueCapacity)
	if err != nil {
		return nil, err
	}
	return &KafkaStream{queue: q, iter: newConsumerIterator(q, consumerTimeout)}, nil
}

// Queue returns the stream's queue, for the PartitionTopicInfos of the
// partitions assigned to the stream.
func (s *KafkaStream) Queue() *ChunkQueue { return s.queue }

// Iterator returns the stream's iterator; every call returns the same one.
func (s *KafkaStream) Iterator() *ConsumerIterator { return s.iter }

// Next is shorthand for s.Iterator().Next(ctx).
func (s *KafkaStream) Next(ctx context.Context) (*Message, error) { return s.iter.Next(ctx) }

// MarkConsumed is shorthand for s.Iterator().MarkConsumed(msg).
func (s *KafkaStream) MarkConsumed(msg *Message) { markConsumed(msg) }

// Messages returns an iterator over the stream's messages for use with
// range. It yields (msg, nil) for each message and (nil, err) for errors
// the stream survives: ErrConsumerTimeout and *PartitionError. It ends when
// ctx is done or the stream is shut down; check ctx.Err() to tell which.
//
// Like Next, it marks a message consumed when the loop asks for the next
// one. Breaking out of the loop leaves the last message unmarked until the
// next call to Next or Messages on the stream, or an explicit MarkConsumed.
func (s *KafkaStream) Messages(ctx context.Context) iter.Seq2[*Message, error] {
	return func(yield func(*Message, error) bool) {
		for {
			m, err := s.iter.Next(ctx)
			if err != nil {
				if !recoverable(err) {
					return
				}
				if !yield(nil, err) {
					return
				}
				continue
			}
			if !yield(m, nil) {
				return
			}
		}
	}
}

// recoverable reports whether the iterator is still usable after err, one
// of the errors Next returns (unwrapped).
func recoverable(err error) bool {
	switch err.(type) {
	case *PartitionError:
		return true
	default:
		return err == ErrConsumerTimeout
	}
}

// Clear drops the queued chunks and the chunk being iterated; the next call
// to Next waits for a new chunk. The connector clears every stream when a
// rebalance ends a generation, after revoking its partitions: Clear frees
// what they had buffered, and the revocation is what guarantees none of it
// is delivered.
func (s *KafkaStream) Clear() {
	s.iter.clear()
	s.queue.Clear()
}

// Polls counts the times the stream's reader has asked the queue for a
// chunk: it grows whenever a call to Next has handed out every message of
// the current chunk (or the chunk was cleared) and needs the next one. It
// is counted per chunk, never per message. The connector watches it, with
// the consumed offsets, to tell a reader that has stopped reading (Kafka
// mode's max.poll.interval.ms). Safe from any goroutine.
func (s *KafkaStream) Polls() uint64 { return s.iter.polls.Load() }

// Waiting reports whether the stream's reader is blocked in Next, waiting
// for a chunk or for a partition's fence: it is not holding messages up.
// Safe from any goroutine.
func (s *KafkaStream) Waiting() bool { return s.iter.waiting.Load() }

// Shutdown ends the stream: the queue is closed and its chunks dropped,
// fetchers' Enqueue calls fail with ErrClosed, Next returns ErrShutdown
// (also to a caller blocked in it, and in the middle of a chunk) and
// Messages loops end. It is idempotent.
func (s *KafkaStream) Shutdown() { s.queue.Close() }
