package fetch

import (
	"encoding/binary"
	"fmt"
	"math"
)

// A partition's records in a fetch response are a sequence of entries,
// each a record batch (message format v2, Kafka 0.11+) or a message
// (formats v0 and v1; a compressed message wraps a message set). Both
// start with an offset (int64) and a length (int32), and hold their magic
// byte at position 16, which tells them apart. The last entry may be
// incomplete: the broker cuts the data at the fetch size.
//
// No checksum covers an entry's offset and length (nor a batch's leader
// epoch and magic): a batch's CRC-32C starts at its attributes, a
// message's CRC-32 at its magic byte. entries checks them against the
// fetch instead, so that a corrupt or hostile header cannot move a
// partition where its data is not: see entries.next.

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
	// minRecordSize is the size of the smallest record of a batch: a
	// one-byte length, then attributes, timestamp delta, offset delta, key
	// length, value length and header count of one byte each.
	minRecordSize = 7
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
	// msgMinSize is the size of the smallest v0 message with its offset
	// and length.
	msgMinSize = 12 + msgMinLength
)

// maxEntryLength is the largest entry length accepted: no fetch response
// the fetcher reads (maxResponseSize) could hold a longer one.
const maxEntryLength = maxResponseSize

// entry is one record batch or message.
type entry struct {
	data []byte // the whole entry, from its offset field on
	at   int    // where data starts in the partition's records
	// base is a batch's first offset, or a message's offset (for a
	// compressed message, that of its last inner message).
	base  int64
	magic int8 // -1 when unknown (an entry cut before its magic byte)
}

// last is the offset of the last record of the entry.
func (e entry) last() int64 {
	if e.magic >= 2 {
		return e.base + int64(e.lastDelta())
	}
	return e.base
}

func (e entry) lastDelta() int32 { return int32(binary.BigEndian.Uint32(e.data[batchLastDeltaAt:])) }

func (e entry) attrs() int16 {
	if e.magic >= 2 {
		return int16(binary.BigEndian.Uint16(e.data[batchAttrsAt:]))
	}
	return int16(e.data[msgAttrsAt])
}

func (e entry) codec() int8 { return int8(e.attrs() & attrCodecMask) }

func (e entry) producerID() int64 {
	return int64(binary.BigEndian.Uint64(e.data[batchProducerAt:]))
}

// entryStatus says what entries.next found.
type entryStatus uint8

const (
	// entryEnd: no more bytes.
	entryEnd entryStatus = iota
	// entryOK: a complete entry.
	entryOK
	// entryPartial: the first bytes of an entry, cut by the fetch size.
	entryPartial
	// entryBad: an entry whose header cannot be right.
	entryBad
	// entryUnreadable: a complete entry that ends at or past the high
	// watermark the response reports. A broker sends records below its
	// high watermark only, but the figure in its response can be older than
	// the read (a leader that just took over): the entry is not handed out
	// now, and is fetched again; nor can a header the checksum does not
	// cover move the partition past the high watermark.
	entryUnreadable
)

// splitEntry reads the header of the entry b starts with: its length and
// magic byte must be possible, and the length within what a response can
// hold. It does not look at offsets (those of a compressed message's inner
// messages are relative).
func splitEntry(b []byte) (e entry, st entryStatus, err error) {
	e.magic = -1
	if len(b) == 0 {
		return e, entryEnd, nil
	}
	if len(b) < 12 {
		e.data, e.base = b, -1
		return e, entryPartial, nil
	}
	e.base = int64(binary.BigEndian.Uint64(b))
	length := int64(int32(binary.BigEndian.Uint32(b[batchLengthAt:])))
	if len(b) > batchMagicAt {
		e.magic = int8(b[batchMagicAt])
	}
	switch {
	case length < msgMinLength:
		return e, entryBad, fmt.Errorf("entry at offset %d of length %d", e.base, length)
	case length > maxEntryLength:
		return e, entryBad, fmt.Errorf("entry at offset %d of length %d, longer than any fetch response", e.base, length)
	case len(b) > batchMagicAt && (e.magic < 0 || e.magic > 2):
		return e, entryBad, fmt.Errorf("entry at offset %d with magic byte %d", e.base, e.magic)
	case e.magic == 2 && length < recordBatchOverhead-12:
		return e, entryBad, fmt.Errorf("record batch at offset %d of length %d", e.base, length)
	}
	if int64(len(b)) < 12+length {
		e.data = b
		return e, entryPartial, nil
	}
	e.data = b[:12+length]
	return e, entryOK, nil
}

// entries iterates the entries of one partition's records and checks the
// offsets no checksum covers against the fetch: each one must start after
// the one before ends; none may reach the partition's high watermark,
// below which a broker serves consumers. A batch's last offset delta must
// not be negative (it is checked against the records by the decoder).
// Entries that end before the fetch offset are returned too (a broker
// starts with the batch that holds the fetch offset, but a down-converted
// or foreign one may start earlier): the decoder skips them, as Java's
// consumer does, and reached counts only the others.
type entries struct {
	b           []byte
	off         int
	fetchOffset int64
	hwm         int64
	n           int   // complete entries returned
	reached     int   // those that reach the fetch offset
	prevLast    int64 // the last offset of the entry before, if n > 0
}

func newEntries(blk *respBlock, fetchOffset int64) entries {
	return entries{b: blk.records, fetchOffset: fetchOffset, hwm: blk.hwm}
}

// next returns the next entry and what it is. An entryPartial entry holds
// the bytes there are, its base and magic when they are among them (magic
// -1 otherwise); an entryBad one comes with the reason, and the iteration
// stops there.
func (it *entries) next() (entry, entryStatus, error) {
	e, st, err := splitEntry(it.b[it.off:])
	e.at = it.off
	if st != entryOK {
		return e, st, err
	}
	if e.magic >= 2 && e.lastDelta() < 0 {
		return e, entryBad, fmt.Errorf("record batch at offset %d with last offset delta %d", e.base, e.lastDelta())
	}
	if e.base < 0 || e.base > math.MaxInt64-math.MaxInt32 {
		return e, entryBad, fmt.Errorf("entry at offset %d", e.base)
	}
	last := e.last()
	switch {
	case it.n > 0 && e.base <= it.prevLast:
		return e, entryBad, fmt.Errorf("entry at offset %d does not follow the one before, which ends at %d", e.base, it.prevLast)
	case last >= it.hwm:
		return e, entryUnreadable, nil
	}
	it.off += len(e.data)
	it.n++
	if last >= it.fetchOffset {
		it.reached++
	}
	it.prevLast = last
	return e, entryOK, nil
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
	// bad, if set, is why an entry's header cannot be right; scanning
	// stopped there.
	bad error
}

// scan reads the entry headers of a partition's block. The parse of a
// response does it as the response is read (see respParser); this is for
// a block read otherwise, or for another fetch offset or size.
func scan(blk *respBlock, fetchOffset int64, fetchSize int32) scanned {
	var sc blockScan
	sc.start(fetchOffset, fetchSize)
	it := newEntries(blk, fetchOffset)
	for {
		e, st, err := it.next()
		if !sc.step(&it, e, st, err) {
			break
		}
	}
	return sc.finish(&it)
}

// scanFor returns what the entry headers of blk tell for a fetch at
// fetchOffset of fetchSize: what the parse of the response found when it
// was for those, else a new scan.
func (blk *respBlock) scanFor(fetchOffset int64, fetchSize int32) scanned {
	if blk.scanned && blk.scanAt == fetchOffset && blk.scanSize == fetchSize {
		return blk.scan
	}
	return scan(blk, fetchOffset, fetchSize)
}

// blockScan sums up the entries of a block one at a time, as entries.next
// returns them (see scan).
type blockScan struct {
	s            scanned
	fetchOffset  int64
	fetchSize    int32
	first        entry
	partialAfter bool
}

func (sc *blockScan) start(fetchOffset int64, fetchSize int32) {
	*sc = blockScan{s: scanned{next: fetchOffset, stopAt: -1}, fetchOffset: fetchOffset, fetchSize: fetchSize}
}

// step takes the next entry of it; it reports false at the end of what
// can be scanned.
func (sc *blockScan) step(it *entries, e entry, st entryStatus, err error) bool {
	s := &sc.s
	if st != entryOK {
		s.bad = err
		if st == entryPartial && it.reached == 0 {
			// The start of the batch at the fetch offset, nothing
			// complete. A record batch starting later means the
			// offsets in between are gone (compacted): move there,
			// if the broker has such an offset.
			switch {
			case e.magic < 2 || e.base <= sc.fetchOffset:
				s.truncated = true
			case e.base >= it.hwm:
				// As a complete entry there (entryUnreadable): the
				// high watermark may be older than the read, and a
				// base no checksum covers cannot move the partition
				// past it. It stays, and is fetched again.
			default:
				s.next = e.base
			}
		}
		sc.partialAfter = st == entryPartial
		return false
	}
	if it.reached == 1 && e.last() >= sc.fetchOffset && sc.first.data == nil {
		sc.first = e
	}
	s.next = max(s.next, e.last()+1)
	return true
}

// finish returns the scan of the entries it returned.
func (sc *blockScan) finish(it *entries) scanned {
	s := sc.s
	// Only the first entry can exceed the fetch size, and then it is all
	// the broker sent. A message set (v0/v1) is judged by its first
	// message.
	first := sc.first
	if it.reached > 0 && (first.magic < 2 || (it.reached == 1 && !sc.partialAfter)) {
		if off, ok := tooLargeAt(first, sc.fetchOffset, sc.fetchSize); ok {
			s.stopAt = off
			s.next = off
		}
	}
	return s
}

// predictNext returns the offset decodeRecords will move a partition to
// (decoded.next), from the entry headers of its block alone: one past the
// last complete entry, or the offset of a message larger than fetchSize,
// at which decodeRecords stops. It is what the fetcher asks for in the
// request it sends ahead. ok is false when decodeRecords will find the
// records truncated (the start of the batch at the fetch offset only),
// which the fetcher resolves with a request of its own. A batch that turns
// out not to decode, or decoding that stops at the limit of
// Config.MaxDecodedBytes, makes the prediction wrong, which costs one
// request.
func predictNext(fetchOffset int64, fetchSize int32, blk *respBlock) (next int64, ok bool) {
	s := blk.scanFor(fetchOffset, fetchSize)
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
		if e.codec() != codecNone || e.base < fetchOffset {
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
		if delta < 0 || off > e.last() {
			return 0, false // the decoder finds the batch corrupt
		}
		if off >= fetchOffset && recordBatchOverhead+int64(r.off-start) > limit {
			return off, true
		}
	}
	return 0, false
}
