package streamcore

import "time"

// Header is one record header (Kafka 0.11+ message format).
type Header struct {
	// Key is the header name.
	Key []byte
	// Value is the header value; it may be nil.
	Value []byte
}

// Message is one record of one partition, as a stream's Next hands it out
// (Kafka's MessageAndMetadata, already decoded to bytes).
//
// A Message must not be modified. The application may keep a Message
// after asking for the next one; the stream does not reuse it. The
// exception is a consumer that opted into recycled messages (the
// connector's zkconsumer.recycle.messages): then a Message, its Key, Value
// and Headers are valid only until the next call to Next on its stream,
// and Clone makes a copy to keep. A recycled message kept past that
// belongs to no partition any more: its Offset reads -1, MarkConsumed does
// nothing with it and the connector's CommitMessages refuses it, as a
// message no stream handed out. Nothing else of it holds: its memory may
// already hold another message, and once that one has been handed out the
// kept pointer is that message.
type Message struct {
	// Topic is the topic the message was fetched from.
	Topic string
	// Partition is the partition id within Topic.
	Partition int32
	// Offset is the message's offset in the partition. Committing Offset+1
	// means the message has been consumed.
	Offset int64
	// Key is the message key; nil when the message has none.
	Key []byte
	// Value is the message payload; nil for a tombstone.
	Value []byte
	// Timestamp is the create or log-append time (message format v1+); the
	// zero time when the broker did not supply one.
	Timestamp time.Time
	// TimestampType says which of the two Timestamp is.
	TimestampType TimestampType
	// Headers are the record headers, if any.
	Headers []Header

	// info is the partition, in the generation that fetched the message,
	// of a message handed out: set by the iterator when it hands the
	// message out, cleared when a recycled message's chunk is released.
	// MarkConsumed and CommitMessages (PartitionOf) use it: nil marks
	// nothing.
	info *PartitionTopicInfo
}

// Clone returns a deep copy of m: its key, value and headers in memory of
// their own (one allocation for all their bytes), so that the copy stays
// valid when m's memory is recycled (see Message). KafkaStream.MarkConsumed
// works on the copy as on m. A nil m gives nil.
func (m *Message) Clone() *Message {
	if m == nil {
		return nil
	}
	c := *m
	n := len(m.Key) + len(m.Value)
	for _, h := range m.Headers {
		n += len(h.Key) + len(h.Value)
	}
	buf := make([]byte, 0, n)
	take := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		start := len(buf)
		buf = append(buf, b...)
		return buf[start:len(buf):len(buf)]
	}
	c.Key, c.Value = take(m.Key), take(m.Value)
	if m.Headers != nil {
		c.Headers = make([]Header, len(m.Headers))
		for i, h := range m.Headers {
			c.Headers[i] = Header{Key: take(h.Key), Value: take(h.Value)}
		}
	}
	return &c
}

// TimestampType tells what a message's timestamp means, as Kafka's
// TimestampType does.
type TimestampType int8

const (
	// NoTimestampType: the message has no timestamp (format v0).
	NoTimestampType TimestampType = iota
	// CreateTime: the producer's time.
	CreateTime
	// LogAppendTime: the broker's time when it wrote the message
	// (message.timestamp.type=LogAppendTime).
	LogAppendTime
)

// String returns Kafka's name: "NoTimestampType", "CreateTime" or
// "LogAppendTime".
func (t TimestampType) String() string {
	switch t {
	case CreateTime:
		return "CreateTime"
	case LogAppendTime:
		return "LogAppendTime"
	}
	return "NoTimestampType"
}

// FetchedDataChunk is the unit a fetcher hands to a stream: the messages of
// one partition from one fetch response, or an error for that partition.
type FetchedDataChunk struct {
	// Messages are the messages of the fetch in offset order. The first ones
	// may lie below FetchOffset (a compressed batch is returned whole); the
	// iterator skips every message below the partition's consumed offset.
	Messages []*Message
	// TopicInfo is the partition and generation the chunk belongs to. The
	// iterator drops chunks without one, and chunks whose TopicInfo has been
	// revoked.
	TopicInfo *PartitionTopicInfo
	// FetchOffset is the offset the fetch asked for: the partition's fetched
	// offset when the chunk was queued.
	FetchOffset int64
	// NextOffset is the offset after the chunk: the partition's fetched
	// offset once it was queued. Records between the last message and
	// NextOffset were filtered out by the fetcher (transaction markers,
	// aborted transactions, compacted gaps); once the application has
	// consumed every message of the chunk, the iterator moves the
	// partition's consumed offset to NextOffset. A chunk without messages
	// only does that. Zero leaves the consumed offset to the messages.
	NextOffset int64
	// Err, when non-nil, makes this an error chunk: Messages are ignored and
	// the iterator returns a *PartitionError wrapping Err.
	Err error

	// release, if set, gives the memory of Messages back to whoever
	// enqueued them (PartitionTopicInfo.EnqueueFrom); called at most
	// once, by done.
	release func()
	// epoch is TopicInfo's epoch when the chunk was queued: the iterator
	// drops a chunk whose partition has been moved back since (see
	// PartitionTopicInfo.Pause).
	epoch uint64
}

// done calls the chunk's release function, once: the stream is finished
// with the chunk, or drops it. Messages of the chunk must not be used
// afterwards.
func (c *FetchedDataChunk) done() {
	if r := c.release; r != nil {
		c.release = nil
		// The messages' memory is about to be reused: one kept past its
		// validity (a misuse of recycling) must not mark or commit
		// anything. Messages not handed out yet have no partition either,
		// so a kept pointer that comes to alias one marks nothing.
		for _, m := range c.Messages {
			if m != nil {
				m.info, m.Offset = nil, -1
			}
		}
		r()
	}
}

// passFiltered moves the consumed offset of c's partition to c.NextOffset
// once the iterator is through c, provided the application has consumed
// every message of c: the consumed offset must already be past c's last
// message (or, for a chunk without messages, at its FetchOffset). What lies
// in between holds no message to consume. A message left undelivered (the
// stream was cleared, the partition revoked) keeps the offset before it.
func (c *FetchedDataChunk) passFiltered() {
	from := c.FetchOffset
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if m := c.Messages[i]; m != nil {
			from = m.Offset + 1
			break
		}
	}
	c.TopicInfo.skipFiltered(from, c.NextOffset)
}
