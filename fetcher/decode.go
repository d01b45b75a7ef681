package fetcher

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"time"

	"github.com/zkconsumer/zkconsumer/stream"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errCorrupt is the cause given for records that cannot be decoded.
var errCorrupt = errors.New("fetcher: corrupt records")

// decodeOpts are the settings decodeRecords follows.
type decodeOpts struct {
	readCommitted bool
	checkCRCs     bool
	// maxDecoded is Config.MaxDecodedBytes: 0 for the default of the
	// fetch size (see decodeLimit).
	maxDecoded int64
}

// decoded is what one partition's block of a fetch response yields.
type decoded struct {
	// msgs are the deliverable messages at or above the fetch offset, in
	// offset order.
	msgs []*stream.Message
	// next is the offset to fetch next: one past the last entry seen
	// (delivered or not: control batches, aborted transactions and records
	// below the fetch offset also move it), or the fetch offset when the
	// block held nothing complete. It never moves past an entry that was
	// not decoded.
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
	// overLimit, if set, says that the entry at next alone needs more
	// than the decoding limit (Config.MaxDecodedBytes); msgs are those
	// before it.
	overLimit error
	// capped: decoding stopped before the entry at next, which did not fit
	// in what was left of the decoding limit; the next fetch starts there.
	capped bool
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
// buffer a compressed batch was decompressed into; nothing is copied.
//
// What it allocates is bounded by decodeLimit (see Config.MaxDecodedBytes),
// whatever the records say: decompressed payloads, messages and headers
// are charged before they are allocated, and the sizes records declare
// (record counts, decompressed lengths) are checked against the bytes that
// must hold them and against that limit first. Decoding stops between two
// entries when the next one does not fit in what is left (decoded.capped),
// and an entry that alone exceeds the limit is reported
// (decoded.overLimit).
func decodeRecords(topic string, partition int32, fetchOffset int64, fetchSize int32, opts decodeOpts, blk *respBlock) decoded {
	s := scan(blk, fetchOffset, fetchSize)
	res := decoded{next: fetchOffset}
	if s.truncated {
		res.truncated = true
		return res
	}
	if s.next == fetchOffset && s.stopAt < 0 {
		// Nothing complete at or above the fetch offset; only a bad entry
		// can be in the way.
		if s.bad != nil {
			res.corrupt = fmt.Errorf("%w: %w", errCorrupt, s.bad)
		}
		return res
	}
	it := newEntries(blk, fetchOffset)
	limit := decodeLimit(opts.maxDecoded, fetchSize)
	d := decoder{topic: topic, partition: partition, fetchOffset: fetchOffset, stopAt: s.stopAt, opts: opts, res: &res,
		it: &it, decodeBudget: decodeBudget{limit: limit, left: limit}}
	if opts.readCommitted {
		d.txns.init(blk.aborted)
	}
	for !d.stopped {
		e, st, err := it.next()
		if st == entryBad {
			res.corrupt = fmt.Errorf("%w: %w", errCorrupt, err)
			break
		}
		if st != entryOK {
			break
		}
		mark, nextBefore, fresh := d.mark(), res.next, d.left == d.limit
		if e.magic >= 2 {
			err = d.batch(e)
		} else {
			err = d.message(e)
		}
		if err == nil {
			continue
		}
		// Nothing of an entry that fails is delivered, and the partition
		// stays before it.
		d.rollback(mark)
		res.next = nextBefore
		switch {
		case !errors.Is(err, errOverBudget):
			res.corrupt = fmt.Errorf("%w: entry at offset %d: %w", errCorrupt, e.base, err)
		case fresh:
			res.overLimit = fmt.Errorf("the entry at offset %d needs more than %d bytes decoded", e.base, limit)
		default:
			res.capped = true
		}
		break
	}
	if res.corrupt == nil && res.overLimit == nil && !res.capped && !d.stopped {
		// Past every complete entry, or to a cut batch that starts
		// beyond them.
		res.next = max(res.next, s.next)
	}
	if d.stopped {
		res.next = s.stopAt
		res.oversize = d.nmsgs == 0
	}
	res.msgs = d.messages()
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
	it          *entries // the block's entries, positioned after the one decoded
	decodeBudget
	// lo and hi bound the offsets of the entry being decoded.
	lo, hi  int64
	prev    int64 // the offset of the last record decoded, if seen
	seen    bool
	stopped bool
}

// batch decodes a record batch.
func (d *decoder) batch(e entry) error {
	data := e.data
	if d.opts.checkCRCs && e.at+len(data) > d.verifiedTo {
		if want, got := binary.BigEndian.Uint32(data[batchCRCAt:]), crc32Castagnoli(data[batchAttrsAt:]); want != got {
			return fmt.Errorf("record batch checksum %08x, computed %08x", want, got)
		}
	}
	attrs := e.attrs()
	last := e.last()
	d.res.next = max(d.res.next, last+1)
	count := int64(int32(binary.BigEndian.Uint32(data[batchCountAt:])))
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
	if control {
		return nil
	}
	records := data[recordBatchOverhead:]
	aliased := true
	if codec := int8(attrs & attrCodecMask); codec != codecNone {
		out, err := decompress(codec, records, d.room())
		if errors.Is(err, errOverLimit) {
			return errOverBudget
		}
		if err != nil {
			return err
		}
		d.charge(int64(cap(out)))
		records, aliased = out, false
	}
	// The count sizes nothing before it is checked against the bytes that
	// must hold the records.
	if count > int64(len(records)/minRecordSize) {
		return fmt.Errorf("record count %d, more than %d bytes of records can hold", count, len(records))
	}
	if err := d.reserve(int(count), aliased); err != nil {
		return err
	}
	d.lo, d.hi = e.base, last
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
		// A header takes at least two bytes (its key and value lengths).
		if j < 0 || nh < 0 || nh > int64(end-j)/2 {
			return errors.New("malformed record")
		}
		off := e.base + delta
		var hs []stream.Header
		if nh > 0 {
			var err error
			if hs, err = d.headerSlice(int(nh)); err != nil {
				return err
			}
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
		m := d.newMsg()
		m.Topic, m.Partition, m.Offset = d.topic, d.partition, off
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
	if i != len(records) {
		// Java's consumer: "records still remaining".
		return fmt.Errorf("%d bytes of records after the %d the batch declares", len(records)-i, count)
	}
	return nil
}

// order checks that off, the offset of the next record, lies in its
// entry's range and follows the previous one: only a corrupt entry
// (checksums unchecked) or a broken producer breaks that.
func (d *decoder) order(off int64) error {
	if off < d.lo || off > d.hi {
		return fmt.Errorf("record offset %d outside the entry's offsets %d to %d", off, d.lo, d.hi)
	}
	if d.seen && off <= d.prev {
		return fmt.Errorf("record offset %d out of order", off)
	}
	d.prev, d.seen = off, true
	d.res.next = max(d.res.next, off+1)
	return nil
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
		d.lo, d.hi = e.base, e.base
		if err := d.order(e.base); err != nil {
			return err
		}
		if e.base == d.stopAt {
			d.stopped = true
			return nil
		}
		if e.base >= d.fetchOffset {
			if err := d.reserve(1, true); err != nil {
				return err
			}
			m := d.newMsg()
			m.Topic, m.Partition, m.Offset = d.topic, d.partition, e.base
			m.Key, m.Value = key, value
			m.Timestamp, m.TimestampType = messageTime(e.magic, logAppend, ts)
			d.res.aliased = true
		}
		return nil
	}
	// Java's consumer rejects a compressed message without a value, or one
	// whose value holds no message, whatever the codec.
	if value == nil {
		return errors.New("compressed message without a value")
	}
	inner, err := decompressMessage(e.magic, codec, value, d.room())
	if errors.Is(err, errOverLimit) {
		return errOverBudget
	}
	if err != nil {
		return err
	}
	d.charge(int64(cap(inner)))
	// The wrapper's offset is that of its last inner message; inner
	// offsets are absolute in format v0 and relative (0, 1, ...) in v1.
	n, lastInner := 0, int64(-1)
	for rest := inner; ; {
		ie, st, _ := splitEntry(rest)
		if st == entryEnd {
			break
		}
		if st != entryOK {
			return errors.New("malformed inner message set")
		}
		if ie.magic >= 2 {
			return errors.New("record batch inside a message set")
		}
		n, lastInner = n+1, ie.base
		rest = rest[len(ie.data):]
	}
	if n == 0 {
		return errors.New("compressed message set without messages")
	}
	var base int64
	d.lo, d.hi = math.MinInt64, e.base
	if e.magic >= 1 {
		if e.base < lastInner {
			return fmt.Errorf("wrapper offset %d below its last inner offset %d", e.base, lastInner)
		}
		base = e.base - lastInner
		d.lo = base
	}
	if err := d.reserve(n, false); err != nil {
		return err
	}
	for rest := inner; len(rest) > 0; {
		ie, _, _ := splitEntry(rest)
		rest = rest[len(ie.data):]
		ikey, ivalue, its, err := d.parseMessage(ie)
		if err != nil {
			return err
		}
		if ie.codec() != codecNone {
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
		m := d.newMsg()
		m.Topic, m.Partition, m.Offset = d.topic, d.partition, off
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
