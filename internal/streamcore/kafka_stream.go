package streamcore

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
// Iterator; MarkConsumed is safe from any goroutine. What would break the
// stream's guarantees if the application called it (dropping queued
// chunks, ending the stream) belongs to the stream's owner, through the
// Control that NewKafkaStream returns with it.
type KafkaStream struct {
	queue *ChunkQueue
	iter  *ConsumerIterator
}

// NewKafkaStream returns a stream whose queue holds at most queueCapacity
// chunks (Kafka's queued.max.message.chunks, default 2; at least 1) and
// whose iterator waits at most consumerTimeout for a chunk before returning
// ErrConsumerTimeout (Kafka's consumer.timeout.ms, default -1: a negative
// value waits for ever; zero never waits), and the stream's Control.
//
// As with context.WithCancel, the stream goes to whoever reads it and the
// Control stays with whoever owns it (the connector): the Control cannot
// be obtained from the stream.
func NewKafkaStream(queueCapacity int, consumerTimeout time.Duration) (*KafkaStream, *Control, error) {
	q, err := newChunkQueue(queueCapacity)
	if err != nil {
		return nil, nil, err
	}
	s := &KafkaStream{queue: q, iter: newConsumerIterator(q, consumerTimeout)}
	return s, &Control{s: s}, nil
}

// QueueOf returns s's queue, for the PartitionTopicInfos of the
// partitions assigned to the stream. It is a function, not a method, so
// that stream.KafkaStream, an alias of KafkaStream that applications
// hold, does not lead to the producer side: only code in this module can
// call it. The connector itself goes through the stream's Control.
func QueueOf(s *KafkaStream) *ChunkQueue { return s.queue }

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

func (s *KafkaStream) clear() {
	s.iter.clear()
	s.queue.clear()
}

func (s *KafkaStream) shutdown() { s.queue.close() }

// Control is the owner's side of a KafkaStream: what the connector does to
// the stream around rebalances and at Shutdown, and what it watches. An
// application that reads a connector's streams never holds one; calling
// these methods on a live stream would break what the connector
// guarantees (a cleared stream skips what was queued, and the consumed
// offsets would move past it). All methods are safe from any goroutine.
type Control struct {
	s *KafkaStream
}

// Clear drops the queued chunks and the chunk being iterated; the next call
// to Next waits for a new chunk. The connector clears every stream when a
// rebalance ends a generation, after revoking its partitions: Clear frees
// what they had buffered, and the revocation is what guarantees none of it
// is delivered.
func (c *Control) Clear() { c.s.clear() }

// Shutdown ends the stream: the queue is closed and its chunks dropped,
// fetchers' Enqueue calls fail with ErrClosed, Next returns ErrShutdown
// (also to a caller blocked in it, and in the middle of a chunk) and
// Messages loops end. It is idempotent.
func (c *Control) Shutdown() { c.s.shutdown() }

// Queue returns the stream's queue (for its length, in metrics).
func (c *Control) Queue() *ChunkQueue { return c.s.queue }

// Polls counts the times the stream's reader has asked the queue for a
// chunk: it grows whenever a call to Next has handed out every message of
// the current chunk (or the chunk was cleared) and needs the next one. It
// is counted per chunk, never per message. The connector watches it, with
// the consumed offsets, to tell a reader that has stopped reading (Kafka
// mode's max.poll.interval.ms).
func (c *Control) Polls() uint64 { return c.s.iter.polls.Load() }

// Waiting reports whether the stream's reader is blocked in Next, waiting
// for a chunk or for a partition's fence: it is not holding messages up.
func (c *Control) Waiting() bool { return c.s.iter.waiting.Load() }
