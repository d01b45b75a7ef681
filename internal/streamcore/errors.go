package streamcore

import (
	"errors"
	"strconv"
)

var (
	// ErrClosed is returned by PartitionTopicInfo.Enqueue and EnqueueError
	// once the stream has been shut down or the partition revoked: the
	// chunk was not queued and never will be, so the fetcher should stop
	// serving the partition.
	ErrClosed = errors.New("stream closed")

	// ErrPaused is returned by PartitionTopicInfo.Enqueue and EnqueueError
	// while the partition is paused (PartitionTopicInfo.Pause), also to a
	// call that was blocked on a full queue when the pause came: the chunk
	// was not queued and the fetched offset did not move, so the fetcher
	// should leave the partition alone and fetch it again, from the same
	// offset, once it is resumed.
	ErrPaused = errors.New("partition paused")

	// ErrMoved is returned by PartitionTopicInfo.EnqueueFrom and
	// EnqueueStop when the partition's fetched offset is no longer the
	// offset the chunk was fetched from: the stream dropped chunks of the
	// paused partition and moved the offset back (PartitionTopicInfo.Pause),
	// also while the call was blocked on a full queue. Nothing of the chunk
	// reaches the application; the fetcher should fetch the partition
	// again from its fetched offset.
	ErrMoved = errors.New("fetched offset moved")

	// ErrShutdown is returned by KafkaStream.Next once the stream has
	// been shut down. It is final, like io.EOF: every later call returns it
	// too. The connector's ErrShutdown is this same value, so one errors.Is check
	// covers the streams and the connector.
	ErrShutdown = errors.New("consumer shut down")

	// ErrConsumerTimeout is returned by KafkaStream.Next when no message
	// arrived within the stream's consumer timeout (Kafka's
	// consumer.timeout.ms and ConsumerTimeoutException). The stream stays
	// usable: call Next again to keep waiting.
	ErrConsumerTimeout = errors.New("consumer timeout")

	// ErrMessageTooLarge reports a message that does not fit in the
	// partition's fetch size (Kafka's fetch.message.max.bytes), so the
	// fetcher cannot make progress on the partition. Fetchers wrap it with
	// the offset and the size, for example
	//
	//	fmt.Errorf("%w: message at offset %d is larger than fetch size %d",
	//		stream.ErrMessageTooLarge, offset, fetchSize)
	//
	// and deliver it with PartitionTopicInfo.EnqueueError.
	ErrMessageTooLarge = errors.New("message larger than fetch size")

	// ErrCorruptMessage reports fetched records that cannot be decoded: a
	// batch whose checksum does not match its contents, a compressed
	// payload that does not decompress (Kafka's InvalidMessageException
	// and CorruptRecordException). The fetcher cannot make progress on
	// the partition past them; it delivers the messages before them, then
	// this error, wrapped with the offset and the decoder's complaint.
	ErrCorruptMessage = errors.New("corrupt message")
)

// PartitionError is the error KafkaStream.Next returns when fetching one
// partition of the stream failed. It names the partition; Err is what the
// fetcher reported (for example an error wrapping ErrMessageTooLarge or
// ErrCorruptMessage).
//
// Unlike Kafka's iterator, which fails for good on such an error, the
// stream carries on: the next call to Next returns the next message, so
// the other partitions of the stream keep flowing.
type PartitionError struct {
	// Topic is the topic of the partition that failed.
	Topic string
	// Partition is the partition id.
	Partition int32
	// Err is the underlying error.
	Err error
}

// Error formats the error as "partition topic-partition: err".
func (e *PartitionError) Error() string {
	return "partition " + e.Topic + "-" + strconv.FormatInt(int64(e.Partition), 10) + ": " + errString(e.Err)
}

// Unwrap returns Err, so errors.Is and errors.As see through the partition.
func (e *PartitionError) Unwrap() error { return e.Err }

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
