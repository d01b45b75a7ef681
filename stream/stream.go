package stream

import "github.com/zkconsumer/zkconsumer/internal/streamcore"

// KafkaStream is one stream of messages handed to the application (Kafka's
// KafkaStream): read it with Next from one goroutine at a time, and mark a
// message consumed before asking for the next one with MarkConsumed, which
// is safe from any goroutine.
type KafkaStream = streamcore.KafkaStream

// Message is one record of one partition, as a stream hands it out
// (Kafka's MessageAndMetadata, already decoded to bytes).
type Message = streamcore.Message

// Header is one record header (Kafka 0.11+ message format).
type Header = streamcore.Header

// TimestampType tells what a message's timestamp means, as Kafka's
// TimestampType does.
type TimestampType = streamcore.TimestampType

// The values of TimestampType.
const (
	// NoTimestampType: the message has no timestamp (format v0).
	NoTimestampType = streamcore.NoTimestampType
	// CreateTime: the producer's time.
	CreateTime = streamcore.CreateTime
	// LogAppendTime: the broker's time when it wrote the message.
	LogAppendTime = streamcore.LogAppendTime
)

// PartitionError is the error Next returns for an error that belongs to
// one partition of the stream (a message larger than the fetch size,
// corrupt records, an offset out of range with no reset policy); the
// stream carries on with its other partitions.
type PartitionError = streamcore.PartitionError

// The errors of the consumer side, for errors.Is. They are the data path's
// own values (and connector's), so one check covers every package.
var (
	// ErrShutdown is returned by Next once the stream has been shut down
	// (the connector's Shutdown). It is final, like io.EOF.
	ErrShutdown = streamcore.ErrShutdown
	// ErrConsumerTimeout is returned by Next when no message arrived
	// within consumer.timeout.ms; the stream stays usable.
	ErrConsumerTimeout = streamcore.ErrConsumerTimeout
	// ErrMessageTooLarge, wrapped in a *PartitionError, reports a message
	// that does not fit in fetch.message.max.bytes.
	ErrMessageTooLarge = streamcore.ErrMessageTooLarge
	// ErrCorruptMessage, wrapped in a *PartitionError, reports fetched
	// records that cannot be decoded.
	ErrCorruptMessage = streamcore.ErrCorruptMessage
)
