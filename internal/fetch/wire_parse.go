package fetch

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/IBM/sarama"
)

// A fetch response is parsed once, as it is read: the connection's reader
// (connReader) reads it in pieces of at most readPiece bytes and, after
// each piece, respParser goes as far as the bytes read so far allow. It
// follows the response's structure against the request (reqIndex), keeps
// a block for each partition the request asked for (the first entry the
// response has for it; the others are skipped without allocating), moves
// the kept aborted-transaction lists together in place, and walks the
// entry headers of each kept partition's records: it checks them against
// the fetch (entries.next), sums up what they tell (blockScan: where the
// partition will stand, a cut or too large first batch) and, with
// check.crcs, computes the CRC-32C of each record batch over each piece
// while it is still in the CPU's cache. The decoder then reuses all that
// (respBlock.scanFor, respBlock.verified) instead of walking the headers
// again.

// readPiece is the most read into the response buffer at once.
const readPiece = 256 << 10

// respParser parses one fetch response body as it is read.
type respParser struct {
	version int16
	flex    bool
	crc     bool   // verify the record batches' checksums
	b       []byte // the whole body; only b[:filled] has been read
	pos     int    // where the next field starts
	state   parseState
	err     error // why the structure cannot be parsed, once known
	topics  int   // topics left after the current one
	parts   int   // partitions of the current topic left after the current one
	aborted int   // aborted transactions left in the current partition
	cur     respCursor
	resp    *fetchResponse

	// blk is the block of the current partition, nil when it is not
	// kept; its aborted transactions are moved together from abStart,
	// the next one to abTo.
	blk           *respBlock
	abStart, abTo int
	// The records of a kept partition: their entries, what their headers
	// tell, and the checksum of the batch being read, covering
	// [crcAt, crcEnd) up to crcAt with want to match; verifying is false
	// once a batch's checksum was not verified here (the decoder checks
	// it and those after it).
	recStart, recEnd int
	it               entries
	scan             blockScan
	verifying        bool
	inBatch          bool
	crcAt, crcEnd    int
	sum, want        uint32
}

type parseState uint8

const (
	atHeader parseState = iota
	atTopic
	atPartition
	atAborted
	atRecordsLen
	atRecords
	atPartitionEnd
	atTopicEnd
	atEnd
	parsed
	parseFailed
)

// startParse starts the parse of buf, a response body to the request last
// encoded (w.ix), into w's parser.
func (w *wireConn) startParse(buf []byte) *respParser {
	parts := w.ix.parts
	resp := &fetchResponse{buf: buf, parts: parts, blocks: make([]respBlock, len(parts))}
	for i, rp := range parts {
		resp.blocks[i] = respBlock{topic: rp.ps.tp.Topic, partition: rp.ps.tp.Partition, missing: true}
	}
	w.parser = respParser{version: w.version, flex: flexible(w.version), crc: w.checkCRCs, b: buf,
		cur: respCursor{ix: &w.ix}, resp: resp}
	return &w.parser
}

// parse parses a whole response body at once (see startParse).
func (w *wireConn) parse(buf []byte) (*fetchResponse, error) {
	return w.startParse(buf).finish()
}

// finish parses what is left once the whole body has been read, and
// returns the response, or the error of a structure that cannot be
// parsed. The parser then holds nothing of the response.
func (p *respParser) finish() (*fetchResponse, error) {
	p.advance(len(p.b))
	resp, err := p.resp, p.err
	if p.state != parsed {
		resp = nil
		if err == nil {
			err = errShort
		}
	}
	*p = respParser{}
	return resp, err
}

// advance parses what the first filled bytes of the body allow. A field
// is read whole or not at all: one that the bytes read so far cut is read
// again, from its start, after the next piece; once the whole body has
// been read, a field that does not fit is an error.
func (p *respParser) advance(filled int) {
	v, flex := p.version, p.flex
	for {
		if p.pos > filled {
			// Past records not kept, which are still being read.
			return
		}
		r := reader{b: p.b[:filled], off: p.pos}
		switch p.state {
		case atHeader:
			if flex {
				r.skipTags()
			}
			if v >= 1 {
				r.int32() // throttle time
			}
			if v >= 7 {
				p.resp.errCode = r.int16()
				r.int32() // session id
			}
			p.topics = r.arrayLen(flex)
			if !p.next(&r, atTopic) {
				return
			}
			if p.topics == 0 {
				p.state = atEnd
			}
		case atTopic:
			name := r.bytes(flex, false)
			p.parts = r.arrayLen(flex)
			if !p.next(&r, atPartition) {
				return
			}
			p.cur.setTopic(name)
			p.topics--
			if p.parts == 0 {
				p.state = atTopicEnd
			}
		case atPartition:
			partition := r.int32()
			kerr, hwm := r.int16(), r.int64()
			p.aborted = 0
			if v >= 4 {
				r.int64() // last stable offset
				if v >= 5 {
					r.int64() // log start offset
				}
				p.aborted = r.arrayLen(flex)
			}
			if !p.next(&r, atAborted) {
				return
			}
			p.blk = nil
			if i := p.cur.find(partition); i >= 0 && p.resp.blocks[i].missing {
				p.blk = &p.resp.blocks[i]
				p.blk.err, p.blk.hwm, p.blk.missing = sarama.KError(kerr), hwm, false
				p.blk.scanAt, p.blk.scanSize = p.resp.parts[i].offset, p.resp.parts[i].ps.pti.FetchSize
			}
			p.abStart, p.abTo = p.pos, p.pos
		case atAborted:
			if p.aborted == 0 {
				if p.blk != nil && p.abTo > p.abStart {
					p.blk.aborted = abortedTxns(p.b[p.abStart:p.abTo:p.abTo])
				}
				p.state = atRecordsLen
				continue
			}
			if !r.need(abortedTxnSize) {
				p.wait(&r)
				return
			}
			at := r.off
			r.off += abortedTxnSize
			if flex {
				r.skipTags()
			}
			if !p.next(&r, atAborted) {
				return
			}
			if p.blk != nil {
				// Moved together where the list starts (the flexible
				// versions follow each with tagged fields), a first offset
				// below zero raised to zero (see abortedTxns).
				if p.abTo != at {
					copy(p.b[p.abTo:p.abTo+abortedTxnSize], p.b[at:at+abortedTxnSize])
				}
				if int64(binary.BigEndian.Uint64(p.b[p.abTo+8:])) < 0 {
					binary.BigEndian.PutUint64(p.b[p.abTo+8:], 0)
				}
				p.abTo += abortedTxnSize
			}
			p.aborted--
		case atRecordsLen:
			if v >= 11 {
				r.int32() // preferred read replica
			}
			var n int64
			if flex {
				n = int64(r.uvarint()) - 1
			} else {
				n = int64(r.int32())
			}
			if !p.next(&r, atRecords) {
				return
			}
			if n > int64(len(p.b)-p.pos) {
				p.fail(errShort)
				return
			}
			p.recStart, p.recEnd = p.pos, p.pos+int(max(n, 0))
			if p.blk == nil {
				p.pos = p.recEnd
				p.state = atPartitionEnd
				continue
			}
			if n >= 0 {
				p.blk.records = p.b[p.recStart:p.recEnd:p.recEnd]
			}
			p.it = entries{b: p.blk.records, fetchOffset: p.blk.scanAt, hwm: p.blk.hwm}
			p.scan.start(p.blk.scanAt, p.blk.scanSize)
			p.verifying, p.inBatch = p.crc, false
		case atRecords:
			if !p.records(filled) {
				return
			}
			p.blk.scan, p.blk.scanned = p.scan.finish(&p.it), true
			p.pos, p.state = p.recEnd, atPartitionEnd
		case atPartitionEnd:
			if flex {
				r.skipTags()
			}
			if !p.next(&r, atPartition) {
				return
			}
			p.parts--
			if p.parts == 0 {
				p.state = atTopicEnd
			}
		case atTopicEnd:
			if flex {
				r.skipTags()
			}
			if !p.next(&r, atTopic) {
				return
			}
			if p.topics == 0 {
				p.state = atEnd
			}
		case atEnd:
			if flex {
				r.skipTags()
			}
			if !p.next(&r, parsed) {
				return
			}
		default:
			return
		}
	}
}

// next moves past what r read and on to state, if r could read it all;
// else the field waits for the next piece, or, when the whole body has
// been read, the parse fails.
func (p *respParser) next(r *reader, state parseState) bool {
	if r.err == nil {
		p.pos, p.state = r.off, state
		return true
	}
	p.wait(r)
	return false
}

// wait handles a field r could not read: it fails the parse when r had
// the whole body.
func (p *respParser) wait(r *reader) {
	if len(r.b) == len(p.b) {
		p.fail(r.err)
	}
}

func (p *respParser) fail(err error) { p.err, p.state = err, parseFailed }

// records walks the entries of the current partition's records as far as
// the first filled bytes allow, verifying the checksums of record batches
// on the way; it reports whether the walk is over (the scan stopped, or
// the records end).
func (p *respParser) records(filled int) bool {
	for {
		at := p.recStart + p.it.off
		if p.verifying && !p.inBatch && !p.startBatch(at, filled) {
			return false
		}
		if p.inBatch {
			if upTo := min(filled, p.crcEnd); upTo > p.crcAt {
				p.sum = crc32.Update(p.sum, castagnoli, p.b[p.crcAt:upTo])
				p.crcAt = upTo
			}
			if p.crcAt < p.crcEnd {
				return false
			}
		}
		// entries.next reads the entry's header, and a complete entry
		// whole: wait for them.
		need := p.recEnd
		if p.recEnd-at >= 12 {
			if filled < at+12 {
				return false
			}
			length := int64(int32(binary.BigEndian.Uint32(p.b[at+batchLengthAt:])))
			if length < msgMinLength || length > maxEntryLength {
				length = batchMagicAt + 1 - 12
			}
			need = min(need, at+12+int(length))
		}
		if filled < need {
			return false
		}
		e, st, err := p.it.next()
		if p.inBatch {
			p.inBatch = false
			if st == entryOK && at+len(e.data) == p.crcEnd && p.sum == p.want {
				p.blk.verified = p.it.off
			} else {
				// The decoder finds it and reports it.
				p.verifying = false
			}
		}
		if !p.scan.step(&p.it, e, st, err) {
			return true
		}
	}
}

// startBatch starts the checksum of the record batch at, if the first
// filled bytes hold its header; it reports false when they do not yet.
// Anything else than a whole record batch there (a message set, a batch
// the fetch size cut, a length that cannot be right, the end of the
// records) ends the checksums verified here.
func (p *respParser) startBatch(at, filled int) bool {
	if p.recEnd-at < batchAttrsAt {
		p.verifying = false
		return true
	}
	if filled < at+batchAttrsAt {
		return false
	}
	length := int64(int32(binary.BigEndian.Uint32(p.b[at+batchLengthAt:])))
	end := int64(at) + 12 + length
	if p.b[at+batchMagicAt] != 2 || length < recordBatchOverhead-12 || end > int64(p.recEnd) {
		p.verifying = false
		return true
	}
	p.crcAt, p.crcEnd, p.inBatch = at+batchAttrsAt, int(end), true
	p.sum, p.want = 0, binary.BigEndian.Uint32(p.b[at+batchCRCAt:])
	return true
}
