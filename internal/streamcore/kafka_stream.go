package streamcore

import (
	"context"
	"time"
)

// KafkaStream is one stream of messages handed to the application (Kafka's
// KafkaStream): a bounded queue that the connector's fetchers fill with
// the messages of the partitions assigned to the stream, read through
// Next (Kafka's ConsumerIterator, whose one entry Next is).
//
// Read it with Next, from one goroutine at a time, and mark a message
// consumed before asking for the next one with MarkConsumed, which is safe
// from any goroutine:
//
//	for {
//		msg, err := s.Next(ctx)
//		if errors.Is(err, ErrShutdown) || ctx.Err() != nil {
//			return // the stream or ctx has ended
//		}
//		if err != nil {
//			continue // a *PartitionError or ErrConsumerTimeout: the stream carries on
//		}
//		process(msg)
//	}
//
// Only the connector that created the stream can clear or end it: nothing
// an application can reach from a stream drops its queued messages or
// moves its offsets past messages the application has not seen.
type KafkaStream struct {
	queue *ChunkQueue
	iter  *consumerIterator
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

// Next marks the message returned by the previous call consumed, then
// returns the next message of the stream, waiting for one if need be.
// Call it from one goroutine at a time.
//
// Within a partition, messages come in offset order. Messages below the
// partition's consumed offset are skipped (a compressed batch starts before
// the offset asked for), as are all messages of partitions the stream no
// longer owns.
//
// Errors:
//   - ErrConsumerTimeout: no message within the consumer timeout
//     (consumer.timeout.ms); the stream stays usable.
//   - *PartitionError: a fetcher reported an error for one partition; the
//     next call carries on with the stream's other messages.
//   - ErrShutdown: the stream was shut down; final, like io.EOF.
//   - ctx.Err(): ctx ended; the stream stays usable with another context.
func (s *KafkaStream) Next(ctx context.Context) (*Message, error) { return s.iter.next(ctx) }

// MarkConsumed marks msg consumed now, without waiting for the next call
// to Next: its partition's consumed offset, what a commit stores, moves to
// msg.Offset+1 unless it is already beyond that or the partition has been
// revoked. Use it to make progress on a message committable before asking
// for the next one, or from a worker goroutine that processed it. msg must
// have come from a stream of the same consumer (the mark goes to msg's own
// partition, whichever stream handed it out); other messages, and nil,
// are ignored. It is safe to call from any goroutine.
func (s *KafkaStream) MarkConsumed(msg *Message) { MarkConsumed(msg) }

// MarkConsumed marks m consumed, as KafkaStream.MarkConsumed(m) does,
// for the module's own code that holds a message without its stream (the
// connector's CommitMessages). It is a function, not a method of Message,
// so that applications have one way to mark: their stream's MarkConsumed.
func MarkConsumed(m *Message) {
	if m != nil && m.info != nil {
		m.info.advanceConsumed(m.Offset + 1)
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
// fetchers' Enqueue calls fail with ErrClosed and Next returns ErrShutdown
// (also to a caller blocked in it, and in the middle of a chunk). It is
// idempotent.
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
