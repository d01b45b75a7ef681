package fetch

import (
	"encoding/binary"
	"hash/crc32"
)

// A fetch response is read in pieces of at most readPiece bytes, and the
// CRC-32C of each record batch (check.crcs) is computed over each piece as
// soon as it has been read, while it is still in the CPU's cache, instead
// of in a pass of its own over the whole response once it has left the
// cache. The bytes the CRC covers then stream through the cache once, on
// the goroutine that reads the response (the request sent ahead's, which
// otherwise waits for the network), and the decoder skips the batches
// verified here (respBlock.verified). A batch whose checksum does not
// match, or anything this scanner does not follow (a legacy message set, a
// cut batch, a length that cannot be right), is left unverified: the
// decoder checks it itself and reports it.

// readPiece is the most read into the response buffer at once.
const readPiece = 256 << 10

// crcScanner follows the structure of a fetch response as it is read.
type crcScanner struct {
	flex    bool
	version int16
	b       []byte // the response body being read
	pos     int    // where the next field starts
	state   scanState
	topics  int // topics left after the current one
	parts   int // partitions of the current topic left after the current one
	aborted int // aborted transactions left in the current partition

	// The records of the current partition: [recStart, recEnd).
	recStart, recEnd int
	// The next batch starts at bpos; the one being verified covers
	// [crcFrom, crcEnd) with checksum want, computed up to crcAt.
	bpos, crcFrom, crcEnd, crcAt int
	crc, want                    uint32
	inBatch                      bool
	// cur finds the request's partitions in the response; part is the
	// position in the request of the current partition (-1: not asked
	// for, or already seen), whose mark is marks[part].
	cur   respCursor
	part  int
	marks []scanMark
}

// scanMark is what the scanner verified of the records of one partition
// of the request: the length of the prefix whose batches were verified,
// of the records starting at start in the response body.
type scanMark struct {
	start, verified int
	set             bool
}

// resetMarks returns m with room for n unset marks.
func resetMarks(m []scanMark, n int) []scanMark {
	if cap(m) < n {
		return make([]scanMark, n)
	}
	m = m[:n]
	clear(m)
	return m
}

type scanState uint8

const (
	scanHeader scanState = iota
	scanTopic
	scanPartition
	scanAborted
	scanRecordsLen
	scanRecords
	scanPartitionEnd
	scanTopicEnd
	scanDone
	scanStop // gave up: the decoder verifies everything itself
)

// newCRCScanner returns a scanner of the response body b to the request
// ix indexes, which sets marks[i] for the request's partition i (marks
// has one per partition, unset).
func newCRCScanner(version int16, b []byte, ix *reqIndex, marks []scanMark) *crcScanner {
	return &crcScanner{version: version, flex: flexible(version), b: b, cur: respCursor{ix: ix}, marks: marks}
}

// cursor reads fields from the bytes read so far; ok turns false when they
// run out, and nothing it read is then used.
type cursor struct {
	b   []byte
	off int
	ok  bool
}

func (c *cursor) take(n int) []byte {
	if !c.ok || n < 0 || len(c.b)-c.off < n {
		c.ok = false
		return nil
	}
	c.off += n
	return c.b[c.off-n : c.off]
}

func (c *cursor) i16() int16 {
	if b := c.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (c *cursor) i32() int32 {
	if b := c.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (c *cursor) uvarint() uint64 {
	if !c.ok {
		return 0
	}
	x, n := binary.Uvarint(c.b[c.off:])
	if n <= 0 {
		c.ok = false
		return 0
	}
	c.off += n
	return x
}

func (c *cursor) tags() {
	for n := c.uvarint(); n > 0 && c.ok; n-- {
		c.uvarint()
		c.take(int(min(c.uvarint(), 1<<31)))
	}
}

func (c *cursor) arrayLen(flex bool) int {
	if flex {
		return int(int64(c.uvarint()) - 1)
	}
	return int(c.i32())
}

// advance scans what the first filled bytes of the body allow.
func (s *crcScanner) advance(filled int) {
	v := s.version
	for {
		c := cursor{b: s.b[:filled], off: s.pos, ok: true}
		switch s.state {
		case scanHeader:
			if s.flex {
				c.tags()
			}
			if v >= 1 {
				c.take(4) // throttle time
			}
			if v >= 7 {
				c.take(6) // error code, session id
			}
			s.topics = c.arrayLen(s.flex)
			if !s.next(&c, scanTopic) {
				return
			}
			if s.topics <= 0 {
				s.state = scanDone
			}
		case scanTopic:
			var name []byte
			if s.flex {
				name = c.take(int(int64(c.uvarint()) - 1))
			} else {
				name = c.take(int(c.i16()))
			}
			s.parts = c.arrayLen(s.flex)
			if !s.next(&c, scanPartition) {
				return
			}
			s.cur.setTopic(name)
			s.topics--
			if s.parts <= 0 {
				s.state = scanTopicEnd
			}
		case scanPartition:
			part := c.i32()
			c.take(2 + 8) // error code, high watermark
			s.aborted = 0
			if v >= 4 {
				c.take(8) // last stable offset
				if v >= 5 {
					c.take(8) // log start offset
				}
				s.aborted = c.arrayLen(s.flex)
			}
			if !s.next(&c, scanAborted) {
				return
			}
			s.part = s.cur.find(part)
			if s.part >= 0 && s.marks[s.part].set {
				s.part = -1
			}
		case scanAborted:
			if s.aborted <= 0 {
				s.state = scanRecordsLen
				continue
			}
			c.take(16) // producer id, first offset
			if s.flex {
				c.tags()
			}
			if !s.next(&c, scanAborted) {
				return
			}
			s.aborted--
		case scanRecordsLen:
			if v >= 11 {
				c.take(4) // preferred read replica
			}
			var n int64
			if s.flex {
				n = int64(c.uvarint()) - 1
			} else {
				n = int64(c.i32())
			}
			if !c.ok {
				return
			}
			n = max(n, 0)
			if n > int64(len(s.b)-c.off) {
				s.state = scanStop
				return
			}
			s.recStart, s.recEnd = c.off, c.off+int(n)
			s.bpos, s.inBatch = s.recStart, false
			if s.part >= 0 {
				s.marks[s.part] = scanMark{start: s.recStart, set: true}
			} else {
				// Not kept: nothing to verify.
				s.bpos = s.recEnd
			}
			s.pos, s.state = c.off, scanRecords
		case scanRecords:
			if !s.records(filled) {
				return
			}
			s.pos, s.state = s.recEnd, scanPartitionEnd
		case scanPartitionEnd:
			if s.flex {
				c.tags()
			}
			if !s.next(&c, scanPartition) {
				return
			}
			s.parts--
			if s.parts <= 0 {
				s.state = scanTopicEnd
			}
		case scanTopicEnd:
			if s.flex {
				c.tags()
			}
			if !s.next(&c, scanTopic) {
				return
			}
			if s.topics <= 0 {
				s.state = scanDone
			}
		default:
			return
		}
	}
}

// next moves past what c read and on to state, if c could read it all.
func (s *crcScanner) next(c *cursor, state scanState) bool {
	if !c.ok {
		return false
	}
	s.pos, s.state = c.off, state
	return true
}

// records verifies the batches of the current partition as far as the
// first filled bytes allow; it reports whether the partition's records
// have all been read.
func (s *crcScanner) records(filled int) bool {
	for s.bpos < s.recEnd {
		if !s.inBatch {
			if filled-s.bpos < batchAttrsAt {
				return filled >= s.recEnd
			}
			length := int64(int32(binary.BigEndian.Uint32(s.b[s.bpos+batchLengthAt:])))
			end := int64(s.bpos) + 12 + length
			if s.b[s.bpos+batchMagicAt] != 2 || length < recordBatchOverhead-12 || end > int64(s.recEnd) {
				// A message set, or the batch the fetch size cut: the
				// decoder checks the rest.
				s.bpos = s.recEnd
				break
			}
			s.crcFrom, s.crcEnd, s.crcAt = s.bpos+batchAttrsAt, int(end), s.bpos+batchAttrsAt
			s.want, s.crc, s.inBatch = binary.BigEndian.Uint32(s.b[s.bpos+batchCRCAt:]), 0, true
		}
		upTo := min(filled, s.crcEnd)
		if upTo > s.crcAt {
			s.crc = crc32.Update(s.crc, castagnoli, s.b[s.crcAt:upTo])
			s.crcAt = upTo
		}
		if s.crcAt < s.crcEnd {
			return false
		}
		s.inBatch = false
		if s.crc != s.want {
			// The decoder finds it and reports it.
			s.bpos = s.recEnd
			break
		}
		s.bpos = s.crcEnd
		s.marks[s.part].verified = s.bpos - s.recStart
	}
	return filled >= s.recEnd
}
