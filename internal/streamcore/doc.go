// Package streamcore is the data path between the fetchers and the
// application: the messages that fetchers enqueue and that applications
// iterate. Applications see its consumer side through package stream (and
// connector), which re-exports KafkaStream, Message and their errors;
// everything that puts messages on a stream (ChunkQueue,
// PartitionTopicInfo, FetchedDataChunk, QueueOf) and everything that owns
// one (NewKafkaStream, Control) lives here, under internal/, where the go
// tool refuses imports from outside this module: an application cannot
// forge a message into a connector's stream.
//
// A fetcher turns one partition's fetch response into a FetchedDataChunk and
// puts it, with PartitionTopicInfo.Enqueue, on the bounded ChunkQueue of the
// stream that owns the partition; a full queue blocks the fetcher. A
// KafkaStream wraps one queue and its iterator (Kafka's ConsumerIterator,
// unexported): KafkaStream.Next hands out the messages of each chunk in
// order, skips messages below the partition's consumed offset (compressed
// batches start early), and advances the consumed offset only when the
// caller asks for the next message or marks one with
// KafkaStream.MarkConsumed, so a commit never covers a message the
// application has not finished. Next is the one way to read a stream and
// KafkaStream.MarkConsumed the one way for an application to mark; the
// function MarkConsumed is the same mark for the module's own code.
// Records the fetcher filtered out (transaction markers, aborted
// transactions, compacted gaps) are passed over once every message before
// them has been consumed, so a partition that ends with them is committed
// at its log end.
//
// A PartitionTopicInfo belongs to one rebalance generation. Revoking it at
// the end of the generation fences it: none of its messages, queued or in
// the chunk being read, is handed out afterwards, and its fetcher's Enqueue
// fails. A fetcher's error for one partition travels as an error chunk and
// comes out of Next as a *PartitionError; the stream carries on.
//
// Pausing a PartitionTopicInfo holds its partition back without giving it
// up (backpressure): its fetcher's Enqueue is refused, so the fetcher
// serves its other partitions instead of blocking on a full queue, and the
// iterator sets the partition's queued chunks aside until it is resumed.
//
// NewKafkaStream returns the stream and its Control. The application reads
// the stream; the owner (the connector) keeps the Control, which clears
// the stream when a generation ends and shuts it down: Next then returns
// ErrShutdown. Nothing an application can reach
// from a stream drops its chunks or moves its offsets past messages it has
// not seen.
//
// For metrics, the connector gives the partitions of each topic shared
// Counters, which the data path updates once per chunk, never per message,
// and reads a partition's Lag from the high watermark fetchers record.
//
// Next is called from one goroutine at a time per stream; everything else
// is safe for concurrent use. The package starts no goroutines and imports
// only the standard library. No exported method of a type that package
// stream re-exports may lead to the producer side (internal/layering's
// TestApplicationCannotForgeMessages builds programs that try).
package streamcore
