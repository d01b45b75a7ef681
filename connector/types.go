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
// Next from one goroutine at a time; mark a message consumed before asking
// for the next one with MarkConsumed, from any goroutine.
//
//	// KafkaStream is one stream of messages handed to the application (Kafka's
//	// KafkaStream): a bounded queue that the connector's fetchers fill with
//	// the messages of the partitions assigned to the stream, read through
//	// Next (Kafka's ConsumerIterator, whose one entry Next is).
//	//
//	// Read it with Next, from one goroutine at a time, and mark a message
//	// consumed before asking for the next one with MarkConsumed, which is safe
//	// from any goroutine:
//	//
//	// 	for {
//	// 		msg, err := s.Next(ctx)
//	// 		if errors.Is(err, ErrShutdown) || ctx.Err() != nil {
//	// 			return // the stream or ctx has ended
//	// 		}
//	// 		if err != nil {
//	// 			continue // a *PartitionError or ErrConsumerTimeout: the stream carries on
//	// 		}
//	// 		process(msg)
//	// 	}
//	//
//	// Only the connector that created the stream can clear or end it: nothing
//	// an application can reach from a stream drops its queued messages or
//	// moves its offsets past messages the application has not seen.
//	type KafkaStream struct {
//		// Has unexported fields.
//	}
//
//	func (s *KafkaStream) Next(ctx context.Context) (*Message, error)
//	    Next marks the message returned by the previous call consumed, then
//	    returns the next message of the stream, waiting for one if need be.
//	    Call it from one goroutine at a time.
//
//	    Within a partition, messages come in offset order. Messages below the
//	    partition's consumed offset are skipped (a compressed batch starts before
//	    the offset asked for), as are all messages of partitions the stream no
//	    longer owns.
//
//	    Errors:
//	      - ErrConsumerTimeout: no message within the consumer timeout
//	        (consumer.timeout.ms); the stream stays usable.
//	      - *PartitionError: a fetcher reported an error for one partition; the
//	        next call carries on with the stream's other messages.
//	      - ErrShutdown: the stream was shut down; final, like io.EOF.
//	      - ctx.Err(): ctx ended; the stream stays usable with another context.
//
//	func (s *KafkaStream) MarkConsumed(msg *Message)
//	    MarkConsumed marks msg consumed now, without waiting for the next call
//	    to Next: its partition's consumed offset, what a commit stores, moves to
//	    msg.Offset+1 unless it is already beyond that or the partition has been
//	    revoked. Use it to make progress on a message committable before asking
//	    for the next one, or from a worker goroutine that processed it. msg must
//	    have come from a stream of the same consumer (the mark goes to msg's own
//	    partition, whichever stream handed it out); other messages, and nil,
//	    are ignored. It is safe to call from any goroutine.
type KafkaStream = stream.KafkaStream

// Message is stream.Message: one record of one partition, as a stream
// hands it out (Kafka's MessageAndMetadata).
//
//	// Message is one record of one partition, as a stream's Next hands it out
//	// (Kafka's MessageAndMetadata, already decoded to bytes).
//	//
//	// A Message must not be modified. The application may keep a Message
//	// after asking for the next one; the stream does not reuse it. The
//	// exception is a consumer that opted into recycled messages (the
//	// connector's zkconsumer.recycle.messages): then a Message, its Key, Value
//	// and Headers are valid only until the next call to Next on its stream,
//	// and Clone makes a copy to keep. A recycled message kept past that
//	// belongs to no partition any more: its Offset reads -1, MarkConsumed does
//	// nothing with it and the connector's CommitMessages refuses it, as a
//	// message no stream handed out. Nothing else of it holds: its memory may
//	// already hold another message, and once that one has been handed out the
//	// kept pointer is that message.
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
//	func (m *Message) Clone() *Message
//	    Clone returns a deep copy of m: its key, value and headers in memory of
//	    their own (one allocation for all their bytes), so that the copy stays
//	    valid when m's memory is recycled (see Message). KafkaStream.MarkConsumed
//	    works on the copy as on m. A nil m gives nil.
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
