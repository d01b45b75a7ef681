package fetch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errCorrupt is the cause given for records that cannot be decoded.
var errCorrupt = errors.New("corrupt records")

// errChunkFull: the chunk being decoded has no room for the next record
// (or entry); the next chunk starts with it.
var errChunkFull = errors.New("chunk full")

// decodeOpts are the settings decodeRecords follows.
type decodeOpts struct {
	readCommitted bool
	checkCRCs     bool
	// maxDecoded is Config.MaxDecodedBytes: 0 for the default of the
	// fetch size (see decodeLimit).
	maxDecoded int64
	// recycle is Config.RecycleMessages: messages, their slabs and
	// decompressed payloads come from pools and go back to them once the
	// chunk is consumed (see lease).
	recycle bool
}

// decoded is what one chunk of a partition's block yields: the block's
// messages up to the decoding limit (see blockDecoder).
type decoded struct {
	// msgs are the deliverable messages at or above the fetch offset, in
	// offset order.
	msgs []*streamcore.Message
	// next is the offset to fetch next: one past the last entry seen
	// (delivered or not: control batches, aborted transactions and records
	// below the fetch offset also move it), or the offset where the chunk
	// started when it holds nothing complete. It never moves past a record
	// that was not decoded.
	next int64
	// truncated: the block holds only the beginning of the batch at the
	// fetch offset: the batch is larger than the fetch size and the broker
	// enforces the limit strictly (fetch v0-v2), or a request-level limit
	// cut it (see fetcher.fetchAlone).
	truncated bool
	// oversize: the message at next is larger than the fetch size (see
	// tooLargeAt), yet the broker sent it whole (KIP-74: brokers on fetch
	// v3+ always return the first batch of the first partition that has
	// data).
	oversize bool
	// corrupt, if set, is why the entry at next cannot be decoded; msgs
	// are those before it.
	corrupt error
	// overLimit, if set, says that the record (or legacy compressed
	// message set) at next alone needs more than the decoding limit
	// (Config.MaxDecodedBytes); msgs are those before it.
	overLimit error
	// capped: decoding stopped before the record or entry at next, which
	// did not fit in what was left of the decoding limit: the block has
	// more, and the next chunk (blockDecoder.chunk) starts there.
	capped bool
	// aliased: some message aliases the response buffer (not only
	// buffers of decompressed batches).
	aliased bool
	// lease holds the pooled memory the messages use, with
	// decodeOpts.recycle; nil otherwise.
	lease *lease
}

// decodeRecords decodes the first chunk of one partition's block: see
// blockDecoder.chunk. It is what a fetch that stops at the decoding limit
// delivers.
func decodeRecords(topic string, partition int32, fetchOffset int64, fetchSize int32, opts decodeOpts, blk *respBlock) decoded {
	bd := newBlockDecoder(topic, partition, fetchOffset, fetchSize, opts, blk, nil)
	defer bd.close()
	return bd.chunk()
}

// blockDecoder turns the records of one partition's block into messages,
// one chunk at a time. Records below fetchOffset (compressed sets and
// record batches start before it, and whole batches may lie before it)
// are skipped, as are control records and, when readCommitted, the records
// of aborted transactions.
//
// Keys, values and headers alias the records (the response buffer) or the
// buffer a compressed batch was decompressed into; nothing is copied.
//
// What one chunk allocates is bounded by decodeLimit (see
// Config.MaxDecodedBytes), whatever the records say: decompressed payloads,
// messages and headers are charged before they are allocated, and the
// sizes records declare (record counts, decompressed lengths) are checked
// against the bytes that must hold them and against that limit first. A
// chunk ends when the next record does not fit in what is left, and the
// next chunk carries on there, within the same batch if need be: the
// records of one batch can span chunks. A decompressed payload is charged
// to every chunk that holds messages of it; one that alone does not fit in
// a chunk is decompressed piece by piece (payloadStream), each piece
// charged to the chunks whose messages alias it. Only a single record
// that alone needs more than the limit is reported (decoded.overLimit).
type blockDecoder struct {
	topic       string
	partition   int32
	fetchOffset int64
	stopAt      int64
	opts        decodeOpts
	blk         *respBlock
	maxChunk    int64 // the decoding limit of a chunk
	s           scanned
	it          entries
	txns        transactions
	pools       *pools // with opts.recycle: where slabs and payload buffers come from
	// prev is the offset of the last record decoded, if seen.
	prev int64
	seen bool
	// next is where the partition stands after the chunks so far.
	next int64
	// cur is the entry being decoded, which may span chunks.
	cur *entryState
	// verified: the checksums of the record batches before this position
	// in the block have been verified (see lookAhead).
	verified int
	started  bool
	done     bool
}

// entryState is an entry whose records are being decoded.
type entryState struct {
	e       entry
	started bool
	// recs are the records of a batch, or the inner messages of a legacy
	// compressed message: in the response, in its decompressed payload,
	// or in the current piece of a streamed payload. i is where decoding
	// stands in them.
	recs []byte
	i    int
	// left counts a batch's records still to decode.
	left   int64
	legacy bool
	// base is added to the offsets of a legacy set's inner messages
	// (relative in format v1).
	base int64
	// lo and hi bound the offsets of the entry's records.
	lo, hi         int64
	firstTS, maxTS int64
	logAppend      bool
	wrapperTS      int64
	aliased        bool // recs aliases the response buffer
	// payload is what recs costs a chunk whose messages alias it: the
	// decompressed payload or the current piece; 0 in the response.
	payload int64
	// used: a message of the chunk being decoded aliases recs.
	// buf, with recycling, is the pooled buffer recs live in.
	buf  *pbuf
	used bool
	// stream, when set, yields recs piece by piece.
	stream *payloadStream
}

func newBlockDecoder(topic string, partition int32, fetchOffset int64, fetchSize int32, opts decodeOpts, blk *respBlock, p *pools) *blockDecoder {
	bd := &blockDecoder{topic: topic, partition: partition, fetchOffset: fetchOffset, opts: opts, blk: blk,
		maxChunk: decodeLimit(opts.maxDecoded, fetchSize), next: fetchOffset, pools: p, verified: blk.verified}
	if !opts.recycle {
		bd.pools = nil
	}
	bd.s = blk.scanFor(fetchOffset, fetchSize)
	bd.stopAt = bd.s.stopAt
	bd.it = newEntries(blk, fetchOffset)
	if opts.readCommitted {
		bd.txns.init(blk.aborted)
	}
	return bd
}

// close releases what an unfinished entry holds (a decompressor).
func (bd *blockDecoder) close() {
	if c := bd.cur; c != nil {
		bd.dropEntry(c)
		bd.cur = nil
	}
	bd.done = true
}

// dropEntry releases the decompressor of a streamed entry and, with
// recycling, its pooled payload buffer, once no chunk can alias it any
// more.
func (bd *blockDecoder) dropEntry(c *entryState) {
	if c.stream != nil {
		c.stream.close()
		c.stream = nil
	}
	if c.buf != nil {
		c.buf.release()
		c.buf = nil
	}
}

// decompress decompresses a batch's payload, into a pooled buffer (held
// once, by the entry) with recycling.
func (d *decoder) decompress(codec int8, data []byte, limit int) ([]byte, *pbuf, error) {
	if d.pools != nil {
		return decompressPooled(d.pools, codec, data, limit)
	}
	out, err := decompress(codec, data, limit)
	return out, nil, err
}

// decompressMessage is decompress for a legacy compressed message.
func (d *decoder) decompressMessage(magic, codec int8, value []byte, limit int) ([]byte, *pbuf, error) {
	if d.pools != nil {
		return decompressMessagePooled(d.pools, magic, codec, value, limit)
	}
	out, err := decompressMessage(magic, codec, value, limit)
	return out, nil, err
}

// more reports whether chunk has more to decode.
func (bd *blockDecoder) more() bool { return !bd.done }

// chunk decodes the next chunk of the block: its messages up to the
// decoding limit. decoded.capped says the block has more.
func (bd *blockDecoder) chunk() decoded {
	res := decoded{next: bd.next}
	if bd.done {
		return res
	}
	if !bd.started {
		bd.started = true
		if bd.s.truncated {
			res.truncated = true
			bd.done = true
			return res
		}
		if bd.s.next == bd.fetchOffset && bd.s.stopAt < 0 {
			// Nothing complete at or above the fetch offset; only a bad
			// entry can be in the way.
			if bd.s.bad != nil {
				res.corrupt = fmt.Errorf("%w: %w", errCorrupt, bd.s.bad)
			}
			bd.done = true
			return res
		}
	}
	d := decoder{blockDecoder: bd, res: &res, decodeBudget: decodeBudget{limit: bd.maxChunk, left: bd.maxChunk, verifiedTo: bd.verified}}
	if bd.pools != nil {
		d.lease = bd.pools.newLease()
	}
	stopped := false
	for !bd.done {
		if bd.cur == nil {
			e, st, err := bd.it.next()
			if st == entryBad {
				res.corrupt = fmt.Errorf("%w: %w", errCorrupt, err)
				bd.done = true
				break
			}
			if st != entryOK {
				// Past every complete entry, or to a cut batch that
				// starts beyond them.
				res.next = max(res.next, bd.s.next)
				bd.done = true
				break
			}
			bd.cur = &entryState{e: e}
		}
		c := bd.cur
		mark, nextBefore, fresh := d.mark(), res.next, d.left == d.limit
		var err error
		if c.e.magic >= 2 {
			err = d.batch(c, fresh)
		} else {
			err = d.message(c, fresh)
		}
		if d.stopped {
			stopped = true
			bd.done = true
			break
		}
		if err == nil {
			bd.dropEntry(c)
			bd.cur = nil
			continue
		}
		if errors.Is(err, errChunkFull) {
			res.capped = true
			break
		}
		// Nothing of an entry that fails is delivered in this chunk, and
		// the partition stays before it.
		d.rollback(mark)
		res.next = nextBefore
		if errors.Is(err, errOverBudget) && !fresh {
			// It may fit in a chunk of its own: the next one.
			res.capped = true
			break
		}
		if errors.Is(err, errOverBudget) {
			res.overLimit = fmt.Errorf("the record at offset %d (of the entry at offset %d) needs more than %d bytes decoded", nextBefore, c.e.base, bd.maxChunk)
		} else {
			res.corrupt = fmt.Errorf("%w: entry at offset %d: %w", errCorrupt, c.e.base, err)
		}
		bd.close()
	}
	if stopped {
		res.next = bd.stopAt
		res.oversize = d.nmsgs == 0
	}
	bd.verified = d.verifiedTo
	bd.next = res.next
	res.msgs = d.messages()
	res.lease = d.finishLease()
	if bd.done {
		bd.close()
	}
	return res
}

// decoder is one chunk of a blockDecoder.
type decoder struct {
	*blockDecoder
	res *decoded
	decodeBudget
	stopped bool
}

// batch decodes (the rest of) a record batch into the chunk.
func (d *decoder) batch(c *entryState, fresh bool) error {
	if !c.started {
		if err := d.startBatch(c, fresh); err != nil || c.left == 0 {
			return err
		}
	} else if err := d.chargePayload(c); err != nil {
		return err
	}
	return d.records(c)
}

// startBatch reads a batch's header: its checksum, what filters it, its
// payload. It leaves c.left at 0 for a batch with nothing to decode.
func (d *decoder) startBatch(c *entryState, fresh bool) error {
	e := c.e
	data := e.data
	if d.opts.checkCRCs && e.at+len(data) > d.verifiedTo {
		if want, got := binary.BigEndian.Uint32(data[batchCRCAt:]), crc32Castagnoli(data[batchAttrsAt:]); want != got {
			return fmt.Errorf("record batch checksum %08x, computed %08x", want, got)
		}
	}
	attrs := e.attrs()
	last := e.last()
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
			d.res.next = max(d.res.next, last+1)
			c.started = true
			return nil
		}
	}
	if control || last < d.fetchOffset {
		// Nothing to deliver: a transaction marker, or a batch wholly
		// before the fetch offset (Java's consumer skips those too).
		d.res.next = max(d.res.next, last+1)
		c.started = true
		return nil
	}
	records := data[recordBatchOverhead:]
	c.recs, c.aliased = records, true
	if codec := int8(attrs & attrCodecMask); codec != codecNone {
		room := d.room() - int(msgCost)
		var (
			out []byte
			buf *pbuf
			err error
		)
		if mayNotFit(codec, records, room) {
			// Its headers say it does not fit, or may not (lz4): streamed
			// in a chunk of its own rather than decompressed whole only
			// to find out.
			err = errOverLimit
		} else {
			out, buf, err = d.decompress(codec, records, room)
		}
		switch {
		case errors.Is(err, errOverLimit) && !fresh:
			// Not in what is left: the next chunk starts with it.
			return errChunkFull
		case errors.Is(err, errOverLimit):
			// Not even in a chunk of its own: piece by piece.
			s, err := newPayloadStream(codec, records, d.maxChunk)
			if errors.Is(err, errOverLimit) {
				return errOverBudget
			}
			if err != nil {
				return err
			}
			c.stream, c.recs, c.aliased = s, nil, false
		case err != nil:
			return err
		default:
			d.charge(int64(cap(out)))
			c.recs, c.aliased, c.payload, c.buf = out, false, int64(cap(out)), buf
			d.holdPayload(buf)
		}
	}
	// The count sizes nothing before it is checked against the bytes that
	// must hold the records (a streamed payload is checked as it comes).
	if c.stream == nil && count > int64(len(c.recs)/minRecordSize) {
		return fmt.Errorf("record count %d, more than %d bytes of records can hold", count, len(c.recs))
	}
	c.lo, c.hi = e.base, last
	c.firstTS = int64(binary.BigEndian.Uint64(data[batchFirstTSAt:]))
	c.maxTS = int64(binary.BigEndian.Uint64(data[batchMaxTSAt:]))
	c.logAppend = attrs&attrLogAppendTime != 0
	c.left = count
	c.started = true
	if count == 0 {
		return d.endBatch(c)
	}
	return nil
}

// mayNotFit reports whether a payload's headers say that it decompresses
// to more than room bytes: a zstd frame's declared content or raw blocks,
// and for lz4, which streams with no window to hold, the most its blocks
// can hold.
func mayNotFit(codec int8, data []byte, room int) bool {
	switch codec {
	case codecLZ4:
		atMost, ok := lz4MaxSize(data)
		return ok && atMost > uint64(room)
	case codecZstd:
		atLeast, _, _, err := zstdOutputSize(data, room)
		return err == nil && atLeast > room
	}
	return false
}

// chargePayload charges a chunk that continues a batch for the
// decompressed payload its messages alias.
func (d *decoder) chargePayload(c *entryState) error {
	c.used = false
	if c.payload == 0 {
		return nil
	}
	if !d.take(c.payload) {
		return errOverBudget
	}
	d.holdPayload(c.buf)
	return nil
}

// records decodes the records of a batch into the chunk until the batch
// ends (then endBatch) or the chunk is full (errChunkFull, c keeps its
// place).
func (d *decoder) records(c *entryState) error {
	for c.left > 0 {
		if c.i == len(c.recs) {
			if c.stream == nil {
				return errors.New("record length past the batch")
			}
			if err := d.nextPiece(c); err != nil {
				return err
			}
		}
		// A record: length, attributes, timestamp delta, offset delta,
		// key, value, headers; every integer a zig-zag varint.
		r := reader{b: c.recs, off: c.i}
		length := r.varint()
		if r.err != nil || length < 0 || length > int64(r.remaining()) {
			return errors.New("record length past the batch")
		}
		end := r.off + int(length)
		r.b = r.b[:end]
		r.int8() // attributes
		tsDelta := r.varint()
		delta := r.varint()
		key := r.varBytes()
		value := r.varBytes()
		nh := r.varint()
		// A header takes at least two bytes (its key and value lengths).
		if r.err != nil || nh < 0 || nh > int64(r.remaining())/2 {
			return errors.New("malformed record")
		}
		headersAt := r.off
		for range nh {
			r.varBytes()
			r.varBytes()
		}
		if r.err != nil || r.off != end {
			return errors.New("malformed record")
		}
		off := c.e.base + delta
		if err := d.checkOrder(c, off); err != nil {
			return err
		}
		if off < d.fetchOffset {
			d.commitOrder(off)
			c.i = end
			c.left--
			continue
		}
		if off == d.stopAt {
			d.stopped = true
			return nil
		}
		// Room for the message and its headers, else the chunk ends
		// before it.
		if err := d.reserve(c.left, c.aliased); err != nil {
			return d.full(err)
		}
		var hs []streamcore.Header
		if nh > 0 {
			var err error
			if hs, err = d.headerSlice(int(nh)); err != nil {
				return d.full(err)
			}
			r.off = headersAt
			for h := range hs {
				hs[h].Key = r.varBytes()
				hs[h].Value = r.varBytes()
			}
		}
		d.commitOrder(off)
		c.i = end
		c.left--
		m := d.newMsg()
		m.Topic, m.Partition, m.Offset = d.topic, d.partition, off
		m.Key, m.Value, m.Headers = key, value, hs
		d.res.aliased = d.res.aliased || c.aliased
		c.used = true
		switch {
		case c.logAppend:
			m.Timestamp, m.TimestampType = millisTime(c.maxTS), streamcore.LogAppendTime
		case c.firstTS < 0:
			m.TimestampType = streamcore.CreateTime
		default:
			m.Timestamp, m.TimestampType = millisTime(c.firstTS+tsDelta), streamcore.CreateTime
		}
	}
	return d.endBatch(c)
}

// full turns a record that does not fit in the chunk into errChunkFull,
// or into errOverBudget when the chunk holds nothing: then the record
// alone needs more than the limit.
func (d *decoder) full(err error) error {
	if errors.Is(err, errOverBudget) && d.nmsgs > 0 {
		return errChunkFull
	}
	return err
}

// endBatch checks that nothing follows a batch's last record and moves
// the partition past the batch.
func (d *decoder) endBatch(c *entryState) error {
	if n := len(c.recs) - c.i; n > 0 {
		// Java's consumer: "records still remaining".
		return fmt.Errorf("%d bytes of records after the ones the batch declares", n)
	}
	if c.stream != nil {
		if empty, err := c.stream.empty(); err != nil {
			return err
		} else if !empty {
			return errors.New("records after the ones the batch declares")
		}
	}
	d.res.next = max(d.res.next, c.e.last()+1)
	return nil
}

// nextPiece makes the next piece of a streamed payload c's records,
// charged to the chunk.
func (d *decoder) nextPiece(c *entryState) error {
	if c.payload > 0 && !c.used {
		// No message of the chunk aliases the piece before: its records
		// were all below the fetch offset.
		d.left += c.payload
	}
	c.payload = 0
	piece, err := c.stream.next(d.room() - int(msgCost))
	switch {
	case errors.Is(err, errOverLimit):
		return d.full(errOverBudget)
	case errors.Is(err, io.EOF):
		return errors.New("record count past the records")
	case err != nil:
		return err
	}
	d.charge(int64(cap(piece)))
	c.recs, c.i, c.payload, c.used = piece, 0, int64(cap(piece)), false
	return nil
}

// checkOrder checks that off, the offset of the next record of c, lies in
// its entry's range and follows the previous one: only a corrupt entry
// (checksums unchecked) or a broken producer breaks that.
func (d *decoder) checkOrder(c *entryState, off int64) error {
	if off < c.lo || off > c.hi {
		return fmt.Errorf("record offset %d outside the entry's offsets %d to %d", off, c.lo, c.hi)
	}
	if d.seen && off <= d.prev {
		return fmt.Errorf("record offset %d out of order", off)
	}
	return nil
}

// commitOrder records off as decoded.
func (d *decoder) commitOrder(off int64) {
	d.prev, d.seen = off, true
	d.res.next = max(d.res.next, off+1)
}

// message decodes a message (format v0/v1), a compressed one by its inner
// message set, whose messages may span chunks.
func (d *decoder) message(c *entryState, fresh bool) error {
	if !c.started {
		if err := d.startMessage(c, fresh); err != nil || !c.legacy {
			return err
		}
	} else if err := d.chargePayload(c); err != nil {
		return err
	}
	return d.innerMessages(c)
}

// startMessage decodes an uncompressed message, or reads a compressed
// one's inner message set.
func (d *decoder) startMessage(c *entryState, fresh bool) error {
	e := c.e
	key, value, ts, err := d.parseMessage(e)
	if err != nil {
		return err
	}
	attrs := e.attrs()
	c.logAppend = e.magic >= 1 && attrs&attrLogAppendTime != 0
	codec := int8(attrs & attrCodecMask)
	if codec == codecNone {
		c.lo, c.hi = e.base, e.base
		if err := d.checkOrder(c, e.base); err != nil {
			return err
		}
		if e.base == d.stopAt {
			d.stopped = true
			return nil
		}
		if e.base >= d.fetchOffset {
			if err := d.reserve(1, true); err != nil {
				return d.full(err)
			}
			m := d.newMsg()
			m.Topic, m.Partition, m.Offset = d.topic, d.partition, e.base
			m.Key, m.Value = key, value
			m.Timestamp, m.TimestampType = messageTime(e.magic, c.logAppend, ts)
			d.res.aliased = true
		}
		d.commitOrder(e.base)
		c.started = true
		return nil
	}
	// Java's consumer rejects a compressed message without a value, or one
	// whose value holds no message, whatever the codec.
	if value == nil {
		return errors.New("compressed message without a value")
	}
	if e.base < d.fetchOffset {
		// Wholly before the fetch offset: its offset is its last inner
		// message's.
		c.started = true
		return nil
	}
	inner, buf, err := d.decompressMessage(e.magic, codec, value, d.room()-int(msgCost))
	switch {
	case errors.Is(err, errOverLimit) && !fresh:
		return errChunkFull
	case errors.Is(err, errOverLimit):
		return errOverBudget
	case err != nil:
		return err
	}
	d.charge(int64(cap(inner)))
	d.holdPayload(buf)
	// The entry holds the payload from here on: dropEntry releases it,
	// also when the checks below find the set corrupt.
	c.payload, c.buf = int64(cap(inner)), buf
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
	c.lo, c.hi = math.MinInt64, e.base
	if e.magic >= 1 {
		if e.base < lastInner {
			return fmt.Errorf("wrapper offset %d below its last inner offset %d", e.base, lastInner)
		}
		c.base = e.base - lastInner
		c.lo = c.base
	}
	c.recs, c.legacy, c.left, c.wrapperTS = inner, true, int64(n), ts
	c.started = true
	return nil
}

// innerMessages decodes (the rest of) a compressed message's inner
// messages into the chunk.
func (d *decoder) innerMessages(c *entryState) error {
	for c.i < len(c.recs) {
		ie, _, _ := splitEntry(c.recs[c.i:])
		ikey, ivalue, its, err := d.parseMessage(ie)
		if err != nil {
			return err
		}
		if ie.codec() != codecNone {
			return errors.New("nested compression")
		}
		off := c.base + ie.base
		if err := d.checkOrder(c, off); err != nil {
			return err
		}
		if off >= d.fetchOffset {
			if err := d.reserve(c.left, false); err != nil {
				return d.full(err)
			}
			if c.logAppend {
				its = c.wrapperTS
			}
			m := d.newMsg()
			m.Topic, m.Partition, m.Offset = d.topic, d.partition, off
			m.Key, m.Value = ikey, ivalue
			m.Timestamp, m.TimestampType = messageTime(c.e.magic, c.logAppend, its)
		}
		d.commitOrder(off)
		c.i += len(ie.data)
		c.left--
	}
	d.res.next = max(d.res.next, c.e.base+1)
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
func messageTime(magic int8, logAppend bool, ms int64) (time.Time, streamcore.TimestampType) {
	switch {
	case magic < 1:
		return time.Time{}, streamcore.NoTimestampType
	case logAppend:
		return millisTime(ms), streamcore.LogAppendTime
	}
	return millisTime(ms), streamcore.CreateTime
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
