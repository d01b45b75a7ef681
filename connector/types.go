package connector

import (
	"github.com/zkconsumer/zkconsumer/stream"
)

// The types below are declared in the packages that implement them and
// re-exported here, so that an application names everything it uses
// through this one import (internal/layering's TestOneImport checks that
// nothing in the connector's API leads to a type it cannot name from
// here). Each is the same type as the original: values pass freely.

// KafkaStream is stream.KafkaStream: one stream of messages handed to the
// application by CreateMessageStreams (Kafka's KafkaStream). Read it with
// Next, Messages or its Iterator from one goroutine at a time.
//
//	// KafkaStream is one stream of messages handed to the application (Kafka's
//	// KafkaStream): a bounded queue that fetchers fill with the chunks of the
//	// partitions assigned to the stream, and the single ConsumerIterator that
//	// drains it.
//	//
//	// Iterate it from one goroutine at a time, with Next, Messages or the
//	// Iterator; MarkConsumed is safe from any goroutine. What would break the
//	// stream's guarantees if the application called it (dropping queued
//	// chunks, ending the stream) belongs to the stream's owner, through the
//	// Control that NewKafkaStream returns with it.
//	type KafkaStream struct {
//		// Has unexported fields.
//	}
//
//	func (s *KafkaStream) Iterator() *ConsumerIterator
//	    Iterator returns the stream's iterator; every call returns the same one.
//
//	func (s *KafkaStream) Next(ctx context.Context) (*Message, error)
//	    Next is shorthand for s.Iterator().Next(ctx).
//
//	func (s *KafkaStream) MarkConsumed(msg *Message)
//	    MarkConsumed is shorthand for s.Iterator().MarkConsumed(msg).
//
//	func (s *KafkaStream) Messages(ctx context.Context) iter.Seq2[*Message, error]
//	    Messages returns an iterator over the stream's messages for use with
//	    range. It yields (msg, nil) for each message and (nil, err) for errors
//	    the stream survives: ErrConsumerTimeout and *PartitionError. It ends when
//	    ctx is done or the stream is shut down; check ctx.Err() to tell which.
//
//	    Like Next, it marks a message consumed when the loop asks for the next
//	    one. Breaking out of the loop leaves the last message unmarked until the
//	    next call to Next or Messages on the stream, or an explicit MarkConsumed.
type KafkaStream = stream.KafkaStream

// ConsumerIterator is stream.ConsumerIterator: the iterator of one
// KafkaStream (Kafka's ConsumerIterator), from KafkaStream.Iterator.
//
//	// ConsumerIterator hands out the messages of one stream in order (Kafka's
//	// ConsumerIterator). Get it from KafkaStream.Iterator; a stream has exactly
//	// one.
//	//
//	// Next must be called from one goroutine at a time. MarkConsumed, and the
//	// stream's Control, may be used from any goroutine, as may
//	// PartitionTopicInfo.Revoke, Pause and Resume.
//	//
//	// Delivery is at least once: a message counts as consumed, and so moves its
//	// partition's consumed offset to Offset+1, only when the caller asks for the
//	// next message on the stream or marks it with MarkConsumed. Kafka's iterator
//	// instead advanced the offset as it handed the message out, so a commit
//	// could cover a message the application had not finished.
//	type ConsumerIterator struct {
//		// Has unexported fields.
//	}
//
//	func (it *ConsumerIterator) Next(ctx context.Context) (*Message, error)
//	    Next marks the message returned by the previous call consumed, then
//	    returns the next message of the stream, waiting for a chunk if need be.
//
//	    Within a partition, messages come in offset order. Messages below the
//	    partition's consumed offset are skipped (a compressed batch starts before
//	    the offset asked for), as are all messages of revoked partitions.
//
//	    Errors:
//	      - ErrConsumerTimeout: no chunk within the consumer timeout; the iterator
//	        stays usable.
//	      - *PartitionError: a fetcher reported an error for one partition; the
//	        next call carries on with the next chunk.
//	      - ErrShutdown: the stream was shut down; final.
//	      - ctx.Err(): ctx ended; the iterator stays usable with another context.
//
//	func (it *ConsumerIterator) MarkConsumed(msg *Message)
//	    MarkConsumed marks msg consumed now, without waiting for the next call to
//	    Next: its partition's consumed offset moves to msg.Offset+1 unless it is
//	    already beyond that or the partition has been revoked. Use it to commit
//	    progress on a message before asking for the next one. msg must have come
//	    from a stream; other messages are ignored. It is safe to call from any
//	    goroutine.
type ConsumerIterator = stream.ConsumerIterator

// Message is stream.Message: one record of one partition, as a stream
// hands it out (Kafka's MessageAndMetadata).
//
//	// Message is one record of one partition, as handed out by a
//	// ConsumerIterator (Kafka's MessageAndMetadata, already decoded to bytes).
//	//
//	// A Message belongs to exactly one FetchedDataChunk and must not be modified
//	// once the chunk is queued. The application may keep a Message after asking
//	// for the next one; the iterator does not reuse it. The exception is a
//	// consumer that opted into recycled messages (the connector's
//	// zkconsumer.recycle.messages): then a
//	// Message, its Key, Value and Headers are valid only until the next call
//	// to Next (or the next round of a Messages loop) on its stream, and Clone
//	// makes a copy to keep. A recycled message kept past that belongs to no
//	// partition any more: its Offset reads -1, MarkConsumed does nothing with
//	// it and the connector's CommitMessages refuses it, as a message no stream
//	// handed out. Nothing else of it holds: its memory may already hold
//	// another message, and once that one has been handed out the kept pointer
//	// is that message.
//	type Message struct {
//		// Topic is the topic the message was fetched from.
//		Topic string
//		// Partition is the partition id within Topic.
//		Partition int32
//		// Offset is the message's offset in the partition. Committing Offset+1
//		// means the message has been consumed.
//		Offset int64
//		// Key is the message key; nil when the message has none.
//		Key []byte
//		// Value is the message payload; nil for a tombstone.
//		Value []byte
//		// Timestamp is the create or log-append time (message format v1+); the
//		// zero time when the broker did not supply one.
//		Timestamp time.Time
//		// TimestampType says which of the two Timestamp is.
//		TimestampType TimestampType
//		// Headers are the record headers, if any.
//		Headers []Header
//		// Has unexported fields.
//	}
//
//	func (m *Message) MarkConsumed()
//	    MarkConsumed marks m consumed, as KafkaStream.MarkConsumed(m) does,
//	    without its stream: a worker goroutine that processed m needs nothing
//	    else to mark it. Its partition's consumed offset moves to m.Offset+1
//	    unless it is already beyond that or the partition has been revoked;
//	    a message that did not come from a stream (or nil) is ignored. It is
//	    safe to call from any goroutine.
//
//	func (m *Message) Clone() *Message
//	    Clone returns a deep copy of m: its key, value and headers in memory of
//	    their own (one allocation for all their bytes), so that the copy stays
//	    valid when m's memory is recycled (see Message). MarkConsumed works on
//	    the copy as on m. A nil m gives nil.
type Message = stream.Message

// Header is stream.Header: one record header (message format v2).
//
//	// Header is one record header (Kafka 0.11+ message format).
//	type Header struct {
//		// Key is the header name.
//		Key []byte
//		// Value is the header value; it may be nil.
//		Value []byte
//	}
type Header = stream.Header

// TimestampType is stream.TimestampType: what a Message's Timestamp means.
//
//	// TimestampType tells what a message's timestamp means, as Kafka's
//	// TimestampType does.
//	type TimestampType int8
//
//	func (t TimestampType) String() string
//	    String returns Kafka's name: "NoTimestampType", "CreateTime" or
//	    "LogAppendTime".
type TimestampType = stream.TimestampType

// The values of TimestampType, as Kafka names them.
const (
	// NoTimestampType: the message has no timestamp (format v0).
	NoTimestampType = stream.NoTimestampType
	// CreateTime: the producer's time.
	CreateTime = stream.CreateTime
	// LogAppendTime: the broker's time when it wrote the message.
	LogAppendTime = stream.LogAppendTime
)

// RebalanceOutcome is how a rebalance ended (RebalanceEvent.Outcome).
type RebalanceOutcome string

// The values of RebalanceOutcome.
const (
	// RebalanceSucceeded: a new generation started.
	RebalanceSucceeded RebalanceOutcome = "success"
	// RebalanceFailed: every attempt failed (ErrRebalanceFailed); the
	// member owns nothing until the next rebalance.
	RebalanceFailed RebalanceOutcome = "failure"
	// RebalanceAborted: the member was closing, or its ZooKeeper session
	// expired and the next one is not there yet.
	RebalanceAborted RebalanceOutcome = "aborted"
)
