package fetcher

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"time"

	"github.com/zkconsumer/zkconsumer/stream"
)

// A partition's records in a fetch response are a sequence of entries,
// each a record batch (message format v2, Kafka 0.11+) or a message
// (formats v0 and v1; a compressed message wraps a message set). Both
// start with an offset (int64) and a length (int32), and hold their magic
// byte at position 16, which tells them apart. The last entry may be
// incomplete: the broker cuts the data at the fetch size.

// Positions in a record batch (v2).
const (
	batchLengthAt    = 8
	batchMagicAt     = 16
	batchCRCAt       = 17
	batchAttrsAt     = 21
	batchLastDeltaAt = 23
	batchFirstTSAt   = 27
	batchMaxTSAt     = 35
	batchProducerAt  = 43
	batchCountAt     = 57
	// recordBatchOverhead is the size of a record batch without its
	// records.
	recordBatchOverhead = 61
)

// Attributes of a record batch.
const (
	attrCodecMask     = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

// Positions in a message (v0/v1).
const (
	msgCRCAt   = 12
	msgMagicAt = 16
	msgAttrsAt = 17
	msgTSAt    = 18
	// msgMinLength is the length of the smallest v0 message: crc, magic,
	// attributes, key and value lengths.
	msgMinLength = 4 + 1 + 1 + 4 + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errCorrupt is the cause given for records that cannot be decoded.
var errCorrupt = errors.New("fetcher: corrupt records")

// entry is one complete record batch or message.
type entry struct {
	data []byte // the whole entry, from its offset field on
	// base is a batch's first offset, or a message's offset (for a
	// compressed message, that of its last inner message).
	base  int64
	magic int8
}

// last is the offset of the last record of the entry.
func (e entry) last() int64 {
	if e.magic >= 2 {
		return e.base + int64(int32(binary.BigEndian.Uint32(e.data[batchLastDeltaAt:])))
	}
	return e.base
}

func (e entry) attrs() int16 {
	if e.magic >= 2 {
		return int16(binary.BigEndian.Uint16(e.data[batchAttrsAt:]))
	}
	return int16(e.data[msgAttrsAt])
}

func (e entry) producerID() int64 {
	return int64(binary.BigEndian.Uint64(e.data[batchProducerAt:]))
}

// entries iterates the entries of a partition's records.
type entries struct {
	b   []byte
	off int
}

// next returns the next complete entry. When there is none, partial
// reports an incomplete one (its first bytes, in e.data) and bad one whose
// length or magic cannot be right.
func (it *entries) next() (e entry, ok, partial, bad bool) {
	rest := it.b[it.off:]
	if len(rest) == 0 {
		return entry{}, false, false, false
	}
	if len(rest) < 12 {
		return entry{data: rest, base: -1, magic: -1}, false, true, false
	}
	e.base = int64(binary.BigEndian.Uint64(rest))
	length := int64(int32(binary.BigEndian.Uint32(rest[batchLengthAt:])))
	if length < msgMinLength {
		return e, false, false, true
	}
	e.magic = -1
	if len(rest) > batchMagicAt {
		e.magic = int8(rest[batchMagicAt])
	}
	switch {
	case e.magic >= 2 && length < recordBatchOverhead-12:
		return e, false, false, true
	case e.magic > 2:
		return e, false, false, true
	}
	if int64(len(rest)) < 12+length {
		e.data = rest
		return e, false, true, false
	}
	e.data = rest[:12+length]
	it.off += int(12 + length)
	return e, true, false, false
}

// scanned is what the entry headers of one partition's records tell,
// without decoding a record.
type scanned struct {
	// next is one past the last complete entry (or the fetch offset).
	next int64
	// truncated: the records hold only the start of the entry at the
	// fetch offset.
	truncated bool
	// stopAt is the offset of a message too large for the fetch size
	// (see tooLargeAt), -1 if none.
	stopAt int64
	// msgs is an upper bound of the messages in uncompressed batches and
	// compressed record batches.
	msgs int
	// bad: an entry's length or magic cannot be right; scanning stopped
	// there.
	bad bool
}

// scan reads the entry headers of records.
func scan(records []byte, fetchOffset int64, fetchSize int32) scanned {
	s := scanned{next: fetchOffset, stopAt: -1}
	it := entries{b: records}
	n := 0
	var first entry
	partialAfter := false
	for {
		e, ok, partial, bad := it.next()
		if !ok {
			s.bad = bad
			if partial && n == 0 {
				// The start of the batch at the fetch offset, nothing
				// complete. A record batch starting later means the
				// offsets in between are gone (compacted): move there.
				if e.magic >= 2 && e.base > fetchOffset {
					s.next = e.base
				} else {
					s.truncated = true
				}
			}
			partialAfter = partial
			break
		}
		if n == 0 {
			first = e
		}
		n++
		s.next = max(s.next, e.last()+1)
		if e.magic >= 2 {
			if e.attrs()&attrControl == 0 {
				// The count is the sender's word: bounded by the size
				// (a record takes at least 7 bytes, a compressed one
				// is guessed at 1 byte) for the slab allocated on it.
				count := int(max(0, int32(binary.BigEndian.Uint32(e.data[batchCountAt:]))))
				s.msgs += min(count, len(e.data))
			}
		} else {
			s.msgs++
		}
	}
	// Only the first entry can exceed the fetch size, and then it is all
	// the broker sent. A message set (v0/v1) is judged by its first
	// message.
	if n > 0 && (first.magic < 2 || (n == 1 && !partialAfter)) {
		if off, ok := tooLargeAt(first, fetchOffset, fetchSize); ok {
			s.stopAt = off
			s.next = off
		}
	}
	return s
}

// predictNext returns the offset decodeRecords will move a partition to
// (decoded.next), from the entry headers alone: one past the last complete
// entry, or the offset of a message larger than fetchSize, at which
// decodeRecords stops. It is what the fetcher asks for in the request it
// sends ahead. ok is false when decodeRecords will find the records
// truncated (the start of the batch at the fetch offset only), which the
// fetcher resolves with a request of its own. A batch that turns out not
// to decode makes the prediction wrong, which costs one request.
func predictNext(fetchOffset int64, fetchSize int32, records []byte) (next int64, ok bool) {
	s := scan(records, fetchOffset, fetchSize)
	return s.next, !s.truncated
}

// tooLargeAt returns the offset of the first message of e, the only batch
// of the records (or the first message of a message set), that is at or
// above fetchOffset and larger than fetchSize.
//
// A message is too large when the smallest unit a broker could send it in
// is: a record batch holding only that record, or in a message set (format
// v0/v1) the message itself. That is what Kafka's consumer saw (brokers
// down-convert record batches to single messages for it) and it does not
// depend on how a producer batched its records. A compressed batch is sent
// and judged whole: one the broker sent whole is delivered.
func tooLargeAt(e entry, fetchOffset int64, fetchSize int32) (int64, bool) {
	limit := int64(fetchSize)
	if int64(len(e.data)) <= limit {
		return 0, false
	}
	if e.magic < 2 {
		if e.attrs()&attrCodecMask != codecNone || e.base < fetchOffset {
			return 0, false
		}
		return e.base, true
	}
	if e.attrs()&(attrCodecMask|attrControl) != 0 {
		return 0, false
	}
	r := reader{b: e.data, off: recordBatchOverhead}
	for r.remaining() > 0 {
		start := r.off
		length := r.varint()
		body := r.off
		r.int8()   // attributes
		r.varint() // timestamp delta
		delta := r.varint()
		if r.err != nil || length < 0 || int64(body)+length > int64(len(e.data)) {
			return 0, false
		}
		r.off = body + int(length)
		off := e.base + delta
		if off >= fetchOffset && recordBatchOverhead+int64(r.off-start) > limit {
			return off, true
		}
	}
	return 0, false
}

// decodeOpts are the settings decodeRecords follows.
type decodeOpts struct {
	readCommitted bool
	checkCRCs     bool
}

// decoded is what one partition's block of a fetch response yields.
type decoded struct {
	// msgs are the deliverable messages at or above the fetch offset, in
	// offset order.
	msgs []*stream.Message
	// next is the offset to fetch next: one past the last entry seen
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
	// corrupt, if set, is why the entry at next cannot be decoded; msgs
	// are those before it.
	corrupt error
	// aliased: some message aliases the response buffer (not only
	// buffers of decompressed batches).
	aliased bool
}

// decodeRecords turns the records of one partition's block into messages.
// Records below fetchOffset (compressed sets and record batches start
// before it) are skipped, as are control records and, when readCommitted,
// the records of aborted transactions.
//
// Keys, values and headers alias the records (the response buffer) or the
// buffer a compressed batch was decompressed into; nothing is copied. The
// messages of the block share one allocation.
func decodeRecords(topic string, partition int32, fetchOffset int64, fetchSize int32, opts decodeOpts, blk *respBlock) decoded {
	s := scan(blk.records, fetchOffset, fetchSize)
	res := decoded{next: fetchOffset}
	if s.truncated {
		res.truncated = true
		return res
	}
	if s.next == fetchOffset && s.stopAt < 0 {
		// Nothing complete at or above the fetch offset; only a bad entry
		// can be in the way.
		if s.bad {
			res.corrupt = fmt.Errorf("%w: bad length or magic at offset %d", errCorrupt, fetchOffset)
		}
		return res
	}
	d := decoder{topic: topic, partition: partition, fetchOffset: fetchOffset, stopAt: s.stopAt, opts: opts, res: &res}
	d.slab = make([]stream.Message, s.msgs)
	res.msgs = make([]*stream.Message, 0, s.msgs)
	if opts.readCommitted {
		d.txns.init(blk.aborted)
	}
	it := entries{b: blk.records}
	for !d.stopped {
		e, ok, _, bad := it.next()
		if bad {
			res.corrupt = fmt.Errorf("%w: bad length or magic after offset %d", errCorrupt, res.next-1)
			break
		}
		if !ok {
			break
		}
		before, nextBefore := len(res.msgs), res.next
		var err error
		if e.magic >= 2 {
			err = d.batch(e)
		} else {
			err = d.message(e)
		}
		if err != nil {
			// Nothing of a bad entry is delivered.
			clear(res.msgs[before:])
			res.msgs = res.msgs[:before]
			// A compressed message's offset is its last inner message's:
			// where it starts is unknown.
			res.next = nextBefore
			if e.magic >= 2 || e.attrs()&attrCodecMask == codecNone {
				res.next = max(nextBefore, e.base)
			}
			res.corrupt = fmt.Errorf("%w: entry at offset %d: %w", errCorrupt, e.base, err)
			break
		}
	}
	if res.corrupt == nil && !d.stopped {
		// Past every complete entry, or to a cut batch that starts
		// beyond them.
		res.next = max(res.next, s.next)
	}
	if d.stopped {
		res.next = s.stopAt
		res.oversize = len(res.msgs) == 0
	}
	if len(res.msgs) == 0 {
		res.msgs = nil
	}
	return res
}

// decoder holds the state of one decodeRecords call.
type decoder struct {
	topic       string
	partition   int32
	fetchOffset int64
	stopAt      int64
	opts        decodeOpts
	res         *decoded
	txns        transactions
	slab        []stream.Message
	used        int   // messages of slab handed out
	prev        int64 // the offset of the last record decoded, if seen
	seen        bool
	headers     []stream.Header
	stopped     bool
}

// newMsg hands out the next message of the slab.
func (d *decoder) newMsg(off int64) *stream.Message {
	if d.used == len(d.slab) {
		// Compressed message sets hold more than the headers tell.
		d.slab, d.used = make([]stream.Message, max(64, len(d.slab))), 0
	}
	m := &d.slab[d.used]
	d.used++
	d.res.msgs = append(d.res.msgs, m)
	m.Topic, m.Partition, m.Offset = d.topic, d.partition, off
	return m
}

// batch decodes a record batch.
func (d *decoder) batch(e entry) error {
	data := e.data
	if d.opts.checkCRCs {
		if want, got := binary.BigEndian.Uint32(data[batchCRCAt:]), crc32Castagnoli(data[batchAttrsAt:]); want != got {
			return fmt.Errorf("record batch checksum %08x, computed %08x", want, got)
		}
	}
	attrs := e.attrs()
	last := e.last()
	d.res.next = max(d.res.next, last+1)
	count := int(int32(binary.BigEndian.Uint32(data[batchCountAt:])))
	if count < 0 {
		return errors.New("negative record count")
	}
	control := attrs&attrControl != 0
	pid := e.producerID()
	if d.opts.readCommitted && pid >= 0 {
		abortMarker := false
		if control {
			abortMarker = isAbortMarker(data[recordBatchOverhead:])
		}
		if d.txns.skip(pid, last, control, abortMarker, attrs&attrTransactional != 0) {
			return nil
		}
	}
	if control || count == 0 {
		return nil
	}
	records := data[recordBatchOverhead:]
	aliased := true
	if codec := int8(attrs & attrCodecMask); codec != codecNone {
		var err error
		if records, err = decompress(codec, records); err != nil {
			return err
		}
		aliased = false
	}
	firstTS := int64(binary.BigEndian.Uint64(data[batchFirstTSAt:]))
	maxTS := int64(binary.BigEndian.Uint64(data[batchMaxTSAt:]))
	logAppend := attrs&attrLogAppendTime != 0
	i := 0
	for range count {
		// A record: length, attributes, timestamp delta, offset delta,
		// key, value, headers; every integer a zig-zag varint.
		length, j := varintAt(records, i)
		if j < 0 || length < 0 || length > int64(len(records)-j) {
			return errors.New("record length past the batch")
		}
		end := j + int(length)
		rec := records[:end]
		j++ // attributes
		tsDelta, j := varintAt(rec, j)
		delta, j := varintAt(rec, j)
		key, j := bytesAt(rec, j)
		value, j := bytesAt(rec, j)
		nh, j := varintAt(rec, j)
		if j < 0 || nh < 0 || nh > int64(end-j) {
			return errors.New("malformed record")
		}
		off := e.base + delta
		var hs []stream.Header
		if nh > 0 {
			hs = d.headerSlice(int(nh))
			for h := range hs {
				hs[h].Key, j = bytesAt(rec, j)
				hs[h].Value, j = bytesAt(rec, j)
			}
		}
		if j != end {
			return errors.New("malformed record")
		}
		i = end
		if err := d.order(off); err != nil {
			return err
		}
		if off < d.fetchOffset {
			continue
		}
		if off == d.stopAt {
			d.stopped = true
			return nil
		}
		m := d.newMsg(off)
		m.Key, m.Value, m.Headers = key, value, hs
		d.res.aliased = d.res.aliased || aliased
		switch {
		case logAppend:
			m.Timestamp, m.TimestampType = millisTime(maxTS), stream.LogAppendTime
		case firstTS < 0:
			m.TimestampType = stream.CreateTime
		default:
			m.Timestamp, m.TimestampType = millisTime(firstTS+tsDelta), stream.CreateTime
		}
	}
	return nil
}

// order checks that off, the offset of the next record, follows the
// previous one: only a corrupt entry (checksums unchecked) breaks that. A
// record past the entry's last offset (some producers' batches, sarama's
// mock broker's, leave the last offset delta at 0) moves next past it.
func (d *decoder) order(off int64) error {
	if d.seen && off <= d.prev {
		return fmt.Errorf("record offset %d out of order", off)
	}
	d.prev, d.seen = off, true
	d.res.next = max(d.res.next, off+1)
	return nil
}

// headerSlice returns n headers from a shared slab.
func (d *decoder) headerSlice(n int) []stream.Header {
	if cap(d.headers)-len(d.headers) < n {
		d.headers = make([]stream.Header, 0, max(64, n))
	}
	l := len(d.headers)
	d.headers = d.headers[:l+n]
	return d.headers[l : l+n : l+n]
}

// message decodes a message (format v0/v1), a compressed one by its inner
// message set.
func (d *decoder) message(e entry) error {
	key, value, ts, err := d.parseMessage(e)
	if err != nil {
		return err
	}
	d.res.next = max(d.res.next, e.base+1)
	attrs := e.attrs()
	logAppend := e.magic >= 1 && attrs&attrLogAppendTime != 0
	codec := int8(attrs & attrCodecMask)
	if codec == codecNone {
		if err := d.order(e.base); err != nil {
			return err
		}
		if e.base == d.stopAt {
			d.stopped = true
			return nil
		}
		if e.base >= d.fetchOffset {
			m := d.newMsg(e.base)
			m.Key, m.Value = key, value
			m.Timestamp, m.TimestampType = messageTime(e.magic, logAppend, ts)
			d.res.aliased = true
		}
		return nil
	}
	inner, err := decompressMessage(e.magic, codec, value)
	if err != nil {
		return err
	}
	// The wrapper's offset is that of its last inner message; inner
	// offsets are absolute in format v0 and relative (0, 1, ...) in v1.
	var lastInner int64 = -1
	for it := (entries{b: inner}); ; {
		ie, ok, partial, bad := it.next()
		if bad || partial {
			return errors.New("malformed inner message set")
		}
		if !ok {
			break
		}
		lastInner = ie.base
	}
	var base int64
	if e.magic >= 1 && lastInner >= 0 {
		base = e.base - lastInner
	}
	for it := (entries{b: inner}); ; {
		ie, ok, _, _ := it.next()
		if !ok {
			break
		}
		if ie.magic >= 2 {
			return errors.New("record batch inside a message set")
		}
		ikey, ivalue, its, err := d.parseMessage(ie)
		if err != nil {
			return err
		}
		if ie.attrs()&attrCodecMask != codecNone {
			return errors.New("nested compression")
		}
		off := base + ie.base
		if err := d.order(off); err != nil {
			return err
		}
		if off < d.fetchOffset {
			continue
		}
		if logAppend {
			its = ts
		}
		m := d.newMsg(off)
		m.Key, m.Value = ikey, ivalue
		m.Timestamp, m.TimestampType = messageTime(e.magic, logAppend, its)
	}
	return nil
}

// parseMessage checks a message's checksum and returns its key, value and
// timestamp (milliseconds; -1 for format v0).
func (d *decoder) parseMessage(e entry) (key, value []byte, ts int64, err error) {
	data := e.data
	if d.opts.checkCRCs {
		if want, got := binary.BigEndian.Uint32(data[msgCRCAt:]), crc32.ChecksumIEEE(data[msgMagicAt:]); want != got {
			return nil, nil, 0, fmt.Errorf("message checksum %08x, computed %08x", want, got)
		}
	}
	r := reader{b: data, off: msgTSAt}
	ts = -1
	if e.magic >= 1 {
		ts = r.int64()
	}
	key = r.bytes(false, true)
	value = r.bytes(false, true)
	if r.err != nil || r.off != len(data) {
		return nil, nil, 0, errors.New("malformed message")
	}
	return key, value, ts, nil
}

// varBytes reads a varint-length-prefixed byte string (length -1: nil),
// capped so that appending to it cannot overwrite what follows.
func (r *reader) varBytes() []byte { return r.slice(r.varint()) }

// millisTime converts a Kafka timestamp; negative ones are unknown.
func millisTime(ms int64) time.Time {
	if ms < 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// messageTime is a v0/v1 message's timestamp; format v0 has none.
func messageTime(magic int8, logAppend bool, ms int64) (time.Time, stream.TimestampType) {
	switch {
	case magic < 1:
		return time.Time{}, stream.NoTimestampType
	case logAppend:
		return millisTime(ms), stream.LogAppendTime
	}
	return millisTime(ms), stream.CreateTime
}

// transactions tracks aborted transactions while walking the batches of a
// read_committed response, like Kafka's Java consumer: a producer's batches
// are aborted from the first offset the broker lists for it until its abort
// marker.
type transactions struct {
	pending []abortedTxn       // by first offset, not yet reached
	aborted map[int64]struct{} // producer ids inside an aborted transaction
}

func (t *transactions) init(list []abortedTxn) {
	if len(list) == 0 {
		return
	}
	t.pending = slices.Clone(list)
	slices.SortFunc(t.pending, func(a, b abortedTxn) int { return cmp.Compare(a.firstOffset, b.firstOffset) })
	t.aborted = make(map[int64]struct{}, len(list))
}

// skip reports whether a batch of producer pid ending at last is to be
// dropped because it belongs to an aborted transaction. It also consumes
// the producer's abort marker. Control batches are dropped by the caller
// anyway.
func (t *transactions) skip(pid, last int64, control, abortMarker, transactional bool) bool {
	for len(t.pending) > 0 && t.pending[0].firstOffset <= last {
		t.aborted[t.pending[0].producerID] = struct{}{}
		t.pending = t.pending[1:]
	}
	if control {
		if abortMarker {
			delete(t.aborted, pid)
		}
		return true
	}
	_, aborted := t.aborted[pid]
	return transactional && aborted
}

// isAbortMarker reports whether the records of a control batch start with
// an abort marker: its key is (version int16, type int16) with type 0 =
// ABORT, 1 = COMMIT.
func isAbortMarker(records []byte) bool {
	r := reader{b: records}
	r.varint() // length
	r.int8()   // attributes
	r.varint() // timestamp delta
	r.varint() // offset delta
	key := r.varBytes()
	if r.err != nil || len(key) < 4 {
		return false
	}
	return binary.BigEndian.Uint16(key[2:4]) == 0
}

// crc32Castagnoli is the CRC-32C of b, a record batch's checksum.
func crc32Castagnoli(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// varintAt reads the zig-zag varint at b[i:]. It returns the position
// after it, or -1 if there is none (also when i is -1, so that a chain of
// reads needs one check at its end). One-byte values, most of them, take
// the inlined fast path.
func varintAt(b []byte, i int) (int64, int) {
	if uint(i) < uint(len(b)) {
		if c := b[i]; c < 0x80 {
			return int64(c>>1) ^ -int64(c&1), i + 1
		}
	}
	return varintAtSlow(b, i)
}

func varintAtSlow(b []byte, i int) (int64, int) {
	if i < 0 || i >= len(b) {
		return 0, -1
	}
	x, n := binary.Varint(b[i:])
	if n <= 0 {
		return 0, -1
	}
	return x, i + n
}

// bytesAt reads the varint-length-prefixed byte string at b[i:] (length
// -1: nil), capped so that appending to it cannot overwrite what follows.
// It returns the position after it, or -1 (see varintAt).
func bytesAt(b []byte, i int) ([]byte, int) {
	n, j := varintAt(b, i)
	if j < 0 || n < 0 {
		return nil, j
	}
	if n > int64(len(b)-j) {
		return nil, -1
	}
	end := j + int(n)
	return b[j:end:end], end
}
