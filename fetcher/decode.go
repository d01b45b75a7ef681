package fetcher

import (
	"cmp"
	"encoding/binary"
	"reflect"
	"slices"
	"time"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/stream"
)

// decoded is what one partition's block of a fetch response yields.
type decoded struct {
	// msgs are the deliverable messages at or above the fetch offset, in
	// offset order.
	msgs []*stream.Message
	// next is the offset to fetch next: one past the last batch seen
	// (delivered or not: control batches, aborted transactions and records
	// below the fetch offset also move it), or the fetch offset when the
	// block held nothing complete.
	next int64
	// truncated: the block holds only the beginning of the batch at the
	// fetch offset: the batch is larger than the fetch size and the broker
	// enforces the limit strictly (fetch v0-v2), or a request-level limit
	// cut it (see fetcher.fetchAlone).
	truncated bool
	// oversize: the message at the fetch offset is larger than the fetch
	// size (see tooLargeAt), yet the broker sent it whole (KIP-74: brokers
	// on fetch v3+ always return the first batch of the first partition
	// that has data).
	oversize bool
}

// decodeBlock turns the records of one partition's fetch response into
// messages. Records below fetchOffset (compressed sets and record batches
// start before it) are skipped, as are control records and, when
// readCommitted, the records of aborted transactions.
//
// Keys, values and headers alias the response buffer, which sarama
// allocated for this response alone (or the decompressed batch); nothing is
// copied. The messages of the block share one allocation.
func decodeBlock(topic string, partition int32, fetchOffset int64, fetchSize int32, readCommitted bool, block *sarama.FetchResponseBlock) decoded {
	res := decoded{next: fetchOffset}
	sets := block.RecordsSet
	if len(sets) == 0 {
		// Sarama drops record batches that hold no records (batches the log
		// cleaner emptied but kept for their producer state); all it keeps
		// is where they end.
		if next, ok := emptyBatchesEnd(block); ok && next > fetchOffset {
			res.next = next
			return res
		}
		res.truncated = block.Partial
		return res
	}
	if truncatedOnly(sets[0]) {
		// The start of the batch at the fetch offset, nothing complete.
		// Emptied batches before it would have been dropped: if the batch
		// starts later, we can move there.
		if b := sets[0].RecordBatch; b != nil && b.FirstOffset > fetchOffset {
			res.next = b.FirstOffset
			return res
		}
		res.truncated = true
		return res
	}
	// Only the first batch can exceed the fetch size, and then it is all
	// the broker sent. Messages before a too large one are delivered; the
	// next fetch starts at it and reports it.
	stopAt := int64(-1)
	if len(sets) == 1 {
		if off, ok := tooLargeAt(sets[0], fetchOffset, fetchSize); ok {
			stopAt = off
		}
	}
	stopped := false

	n, nh := countRecords(sets)
	slab := make([]stream.Message, n)
	res.msgs = make([]*stream.Message, 0, n)
	var headers []stream.Header
	if nh > 0 {
		headers = make([]stream.Header, nh)
	}
	var txns transactions
	if readCommitted {
		txns.init(block.AbortedTransactions)
	}
	// newMsg hands out the next message of the slab.
	newMsg := func() *stream.Message {
		m := &slab[len(res.msgs)]
		res.msgs = append(res.msgs, m)
		return m
	}
	for _, rs := range sets {
		if b := rs.RecordBatch; b != nil {
			if b.PartialTrailingRecord {
				break
			}
			res.next = max(res.next, b.LastOffset()+1)
			if readCommitted && b.ProducerID >= 0 && txns.skip(b) {
				continue
			}
			if b.Control {
				continue
			}
			for _, r := range b.Records {
				off := b.FirstOffset + r.OffsetDelta
				if off < fetchOffset {
					continue
				}
				if off == stopAt {
					stopped = true
					break
				}
				var hs []stream.Header
				if len(r.Headers) > 0 {
					hs, headers = headers[:len(r.Headers):len(r.Headers)], headers[len(r.Headers):]
					for i, h := range r.Headers {
						hs[i] = stream.Header{Key: h.Key, Value: h.Value}
					}
				}
				m := newMsg()
				m.Topic, m.Partition, m.Offset = topic, partition, off
				m.Key, m.Value = r.Key, r.Value
				m.Timestamp, m.TimestampType = recordTime(b, r)
				m.Headers = hs
			}
			continue
		}
		ms := rs.MsgSet
		if ms == nil {
			continue
		}
		for _, mb := range ms.Messages {
			res.next = max(res.next, mb.Offset+1)
			w := mb.Msg
			if w.Set == nil {
				if mb.Offset == stopAt {
					stopped = true
					break
				}
				if mb.Offset >= fetchOffset {
					m := newMsg()
					m.Topic, m.Partition, m.Offset = topic, partition, mb.Offset
					m.Key, m.Value = w.Key, w.Value
					m.Timestamp, m.TimestampType = messageTime(w.Version, w.LogAppendTime, w.Timestamp)
				}
				continue
			}
			// A compressed wrapper. Its offset is that of its last inner
			// message; inner offsets are absolute in format v0 and relative
			// (0, 1, ...) in v1.
			inner := w.Set.Messages
			var base int64
			if w.Version >= 1 && len(inner) > 0 {
				base = mb.Offset - inner[len(inner)-1].Offset
			}
			for _, im := range inner {
				off := base + im.Offset
				if off < fetchOffset {
					continue
				}
				ts := im.Msg.Timestamp
				if w.LogAppendTime {
					ts = w.Timestamp
				}
				m := newMsg()
				m.Topic, m.Partition, m.Offset = topic, partition, off
				m.Key, m.Value = im.Msg.Key, im.Msg.Value
				m.Timestamp, m.TimestampType = messageTime(w.Version, w.LogAppendTime, ts)
			}
		}
	}
	if stopped {
		res.next = stopAt
		res.oversize = len(res.msgs) == 0
	}
	if len(res.msgs) == 0 {
		res.msgs = nil
	}
	return res
}

// predictNext returns the offset decodeBlock will move a partition to
// (decoded.next), from the batch headers alone, without decoding a record:
// one past the last complete batch, or where emptied batches end, or the
// fetch offset when the block holds nothing complete, or the offset of a
// message larger than fetchSize, at which decodeBlock stops. It is what
// the fetcher asks for in the request it sends ahead. ok is false when
// decodeBlock will find the block truncated (the start of the batch at the
// fetch offset only), which the fetcher resolves with a request of its
// own.
func predictNext(fetchOffset int64, fetchSize int32, block *sarama.FetchResponseBlock) (next int64, ok bool) {
	sets := block.RecordsSet
	if len(sets) == 0 {
		if end, found := emptyBatchesEnd(block); found && end > fetchOffset {
			return end, true
		}
		return fetchOffset, !block.Partial
	}
	if truncatedOnly(sets[0]) {
		if b := sets[0].RecordBatch; b != nil && b.FirstOffset > fetchOffset {
			return b.FirstOffset, true
		}
		return fetchOffset, false
	}
	if len(sets) == 1 {
		if off, tooLarge := tooLargeAt(sets[0], fetchOffset, fetchSize); tooLarge {
			return off, true
		}
	}
	next = fetchOffset
	for _, rs := range sets {
		if b := rs.RecordBatch; b != nil {
			if b.PartialTrailingRecord {
				break
			}
			next = max(next, b.LastOffset()+1)
			continue
		}
		// A compressed wrapper's offset is that of its last inner message.
		if ms := rs.MsgSet; ms != nil {
			for _, mb := range ms.Messages {
				next = max(next, mb.Offset+1)
			}
		}
	}
	return next, true
}

// truncatedOnly reports whether rs holds only an incomplete batch. Sarama
// keeps an incomplete batch only when nothing complete precedes it.
func truncatedOnly(rs *sarama.Records) bool {
	if b := rs.RecordBatch; b != nil {
		return b.PartialTrailingRecord
	}
	if ms := rs.MsgSet; ms != nil {
		return ms.PartialTrailingMessage && len(ms.Messages) == 0
	}
	return false
}

// countRecords returns an upper bound of the messages in sets (control
// batches excluded) and the number of their headers.
func countRecords(sets []*sarama.Records) (n, headers int) {
	for _, rs := range sets {
		if b := rs.RecordBatch; b != nil {
			if b.Control || b.PartialTrailingRecord {
				continue
			}
			n += len(b.Records)
			for _, r := range b.Records {
				headers += len(r.Headers)
			}
		} else if ms := rs.MsgSet; ms != nil {
			for _, mb := range ms.Messages {
				if mb.Msg.Set != nil {
					n += len(mb.Msg.Set.Messages)
				} else {
					n++
				}
			}
		}
	}
	return n, headers
}

// recordTime is a v2 record's timestamp: the batch's max timestamp when the
// topic uses log-append time, else the batch's first timestamp plus the
// record's delta.
func recordTime(b *sarama.RecordBatch, r *sarama.Record) (time.Time, stream.TimestampType) {
	if b.LogAppendTime {
		return b.MaxTimestamp, stream.LogAppendTime
	}
	if b.FirstTimestamp.IsZero() {
		return time.Time{}, stream.CreateTime
	}
	return b.FirstTimestamp.Add(r.TimestampDelta), stream.CreateTime
}

// messageTime is a v0/v1 message's timestamp; format v0 has none.
func messageTime(version int8, logAppend bool, ts time.Time) (time.Time, stream.TimestampType) {
	switch {
	case version < 1:
		return time.Time{}, stream.NoTimestampType
	case logAppend:
		return ts, stream.LogAppendTime
	}
	return ts, stream.CreateTime
}

// transactions tracks aborted transactions while walking the batches of a
// read_committed response, like Kafka's Java consumer: a producer's batches
// are aborted from the first offset the broker lists for it until its abort
// marker.
type transactions struct {
	pending []*sarama.AbortedTransaction // by first offset, not yet reached
	aborted map[int64]struct{}           // producer ids inside an aborted transaction
}

func (t *transactions) init(list []*sarama.AbortedTransaction) {
	if len(list) == 0 {
		return
	}
	t.pending = slices.Clone(list)
	slices.SortFunc(t.pending, func(a, b *sarama.AbortedTransaction) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	t.aborted = make(map[int64]struct{}, len(list))
}

// skip reports whether batch b, which has a producer id, is to be dropped
// because it belongs to an aborted transaction. It also consumes b's abort
// marker. Control batches are dropped by the caller anyway.
func (t *transactions) skip(b *sarama.RecordBatch) bool {
	last := b.LastOffset()
	for len(t.pending) > 0 && t.pending[0].FirstOffset <= last {
		t.aborted[t.pending[0].ProducerID] = struct{}{}
		t.pending = t.pending[1:]
	}
	if b.Control {
		if isAbortMarker(b) {
			delete(t.aborted, b.ProducerID)
		}
		return true
	}
	_, aborted := t.aborted[b.ProducerID]
	return b.IsTransactional && aborted
}

// isAbortMarker reports whether control batch b is an abort marker: its
// record's key is (version int16, type int16) with type 0 = ABORT, 1 =
// COMMIT.
func isAbortMarker(b *sarama.RecordBatch) bool {
	if len(b.Records) == 0 || len(b.Records[0].Key) < 4 {
		return false
	}
	return binary.BigEndian.Uint16(b.Records[0].Key[2:4]) == 0
}

// recordBatchOverhead is the size of a record batch without its records:
// base offset, length, leader epoch, magic, crc, attributes, last offset
// delta, two timestamps, producer id and epoch, base sequence, record count.
const recordBatchOverhead = 8 + 4 + 4 + 1 + 4 + 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4

// tooLargeAt returns the offset of the first message of rs, the only batch
// of a block, that is at or above fetchOffset and larger than fetchSize.
//
// A message is too large when the smallest unit a broker could send it in
// is: a record batch holding only that record, or in a message set (format
// v0/v1) the message itself. That is what Kafka's consumer saw (brokers
// down-convert record batches to single messages for it) and it does not
// depend on how a producer batched its records. A compressed batch is sent
// and judged whole, by its size on the wire, which sarama does not keep:
// one the broker sent whole is delivered.
func tooLargeAt(rs *sarama.Records, fetchOffset int64, fetchSize int32) (int64, bool) {
	limit := int64(fetchSize)
	if b := rs.RecordBatch; b != nil {
		if b.Codec != sarama.CompressionNone || b.Control {
			return 0, false
		}
		// A cheap bound first: a record's varints (length, attributes,
		// timestamp and offset deltas, key and value lengths, header
		// count) take at most 36 bytes, a header's two lengths 10.
		upper := int64(recordBatchOverhead)
		for _, r := range b.Records {
			upper += 36 + int64(len(r.Key)+len(r.Value))
			for _, h := range r.Headers {
				upper += 10 + int64(len(h.Key)+len(h.Value))
			}
		}
		if upper <= limit {
			return 0, false
		}
		for _, r := range b.Records {
			off := b.FirstOffset + r.OffsetDelta
			if off >= fetchOffset && recordBatchOverhead+recordSize(r) > limit {
				return off, true
			}
		}
		return 0, false
	}
	ms := rs.MsgSet
	if ms == nil || len(ms.Messages) == 0 {
		return 0, false
	}
	mb := ms.Messages[0]
	m := mb.Msg
	if m.Codec != sarama.CompressionNone || mb.Offset < fetchOffset {
		return 0, false
	}
	// Offset, size, crc, magic, attributes, [timestamp], key, value.
	size := int64(8 + 4 + 4 + 1 + 1 + 4 + len(m.Key) + 4 + len(m.Value))
	if m.Version >= 1 {
		size += 8
	}
	return mb.Offset, size > limit
}

// recordSize is the size of a v2 record on the wire, length prefix
// included.
func recordSize(r *sarama.Record) int64 {
	body := 1 + varintSize(int64(r.TimestampDelta/time.Millisecond)) + varintSize(r.OffsetDelta) +
		bytesSize(r.Key) + bytesSize(r.Value) + varintSize(int64(len(r.Headers)))
	for _, h := range r.Headers {
		body += bytesSize(h.Key) + bytesSize(h.Value)
	}
	return varintSize(body) + body
}

// bytesSize is the size of a varint-length-prefixed byte string (nil is
// length -1).
func bytesSize(b []byte) int64 {
	if b == nil {
		return 1
	}
	return varintSize(int64(len(b))) + int64(len(b))
}

// varintSize is the size of x as a zig-zag varint.
func varintSize(x int64) int64 {
	ux := uint64(x)<<1 ^ uint64(x>>63)
	n := int64(1)
	for ux >= 0x80 {
		ux >>= 7
		n++
	}
	return n
}

// recordsNextOffset locates sarama's private FetchResponseBlock field
// recordsNextOffset: one past the last record batch decoded, including the
// batches without records that sarama leaves out of RecordsSet. Sarama's
// own consumer uses it to step over such batches; without it a fetcher
// whose response holds only emptied batches would never advance. It is read
// with reflection, read-only; if a sarama upgrade renames it, index is nil
// and emptyBatchesEnd reports nothing (a unit test catches that).
var recordsNextOffset = func() []int {
	f, ok := reflect.TypeFor[sarama.FetchResponseBlock]().FieldByName("recordsNextOffset")
	if !ok || f.Type != reflect.TypeFor[*int64]() {
		return nil
	}
	return f.Index
}()

// emptyBatchesEnd returns where the record batches of a block that yielded
// no records end, if sarama recorded it.
func emptyBatchesEnd(block *sarama.FetchResponseBlock) (int64, bool) {
	if recordsNextOffset == nil {
		return 0, false
	}
	v := reflect.ValueOf(block).Elem().FieldByIndex(recordsNextOffset)
	if v.IsNil() {
		return 0, false
	}
	return v.Elem().Int(), true
}
