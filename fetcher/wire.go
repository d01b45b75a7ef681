package fetcher

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/IBM/sarama"
)

// The fetcher speaks the Fetch API itself on the connection sarama opened
// (sarama did the ApiVersions exchange, TLS and SASL, and still serves every
// other request on it). Sarama's Broker.Fetch would decode the whole
// response (every record, every checksum) before returning; reading the
// response as bytes lets the fetcher send the next request as soon as the
// batch headers are scanned, and decode each partition only when it
// enqueues it.
//
// Sarama and the fetcher take turns on the connection, never overlapping:
// sarama reads from it only while one of its own requests is pending, and
// its read buffer is empty between two requests because a broker sends
// nothing unasked.

// errMalformed wraps the errors of a fetch response whose structure (not
// its records) cannot be parsed.
var errMalformed = errors.New("fetcher: malformed fetch response")

// maxResponseSize bounds the size of a fetch response the fetcher reads,
// as sarama.MaxResponseSize does for sarama.
const maxResponseSize = 100 << 20

// apiKeyFetch is the Fetch API's key.
const apiKeyFetch = 1

// wireConn sends fetch requests and reads their responses on a connection
// sarama opened. It is used by one goroutine at a time.
type wireConn struct {
	conn         net.Conn
	clientID     string
	version      int16 // the Fetch version negotiated for this connection
	readTimeout  time.Duration
	writeTimeout time.Duration
	corr         int32
	// checkCRCs: the record batches' checksums are verified as the
	// response is read (see crcScanner).
	checkCRCs bool
	wbuf      []byte
	hdr       [8]byte
	// topics interns topic names, so that parsing a response allocates
	// none.
	topics map[string]string
}

// fetchRequest is one Fetch request.
type fetchRequest struct {
	maxWait       int32
	minBytes      int32
	maxBytes      int32
	readCommitted bool
	parts         []reqPart
	// sizes overrides the partitions' fetch sizes when set (see probe).
	sizes []int32
}

// abortedTxn is an aborted transaction listed in a fetch response.
type abortedTxn struct {
	producerID  int64
	firstOffset int64
}

// respBlock is one partition of a fetch response.
type respBlock struct {
	topic     string
	partition int32
	err       sarama.KError
	hwm       int64
	aborted   []abortedTxn
	// records is the partition's record data, aliasing the response
	// buffer; nil when the broker sent none.
	records []byte
	// verified: the checksums of the record batches before this position
	// in records were verified as the response was read.
	verified int
}

// fetchResponse is a fetch response, parsed down to each partition's
// record bytes.
type fetchResponse struct {
	errCode int16
	blocks  []respBlock
	// buf is the response body every block's records alias.
	buf []byte
	// pb is the pooled buffer buf lives in, held once by whoever
	// processes the response (see fetcher.doneWith).
	pb *pbuf
	// index maps a partition to its block, for responses with many.
	index map[tpKey]int
}

// tpKey names a partition in fetchResponse.index.
type tpKey struct {
	topic     string
	partition int32
}

// block returns the block of a partition, nil if the response has none.
func (r *fetchResponse) block(topic string, partition int32) *respBlock {
	if r.index != nil {
		if i, ok := r.index[tpKey{topic, partition}]; ok {
			return &r.blocks[i]
		}
		return nil
	}
	for i := range r.blocks {
		if b := &r.blocks[i]; b.partition == partition && b.topic == topic {
			return b
		}
	}
	return nil
}

// roundTrip sends req and reads its response into a buffer from p, which
// the response holds once (resp.pb).
func (w *wireConn) roundTrip(req *fetchRequest, p *pools) (*fetchResponse, error) {
	w.corr++
	w.wbuf = w.encode(w.wbuf[:0], req)
	if err := w.conn.SetWriteDeadline(time.Now().Add(w.writeTimeout)); err != nil {
		return nil, err
	}
	if _, err := w.conn.Write(w.wbuf); err != nil {
		return nil, err
	}
	timeout := w.readTimeout + time.Duration(req.maxWait)*time.Millisecond
	if err := w.conn.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(w.conn, w.hdr[:]); err != nil {
		return nil, err
	}
	size := int32(binary.BigEndian.Uint32(w.hdr[:4]))
	if corr := int32(binary.BigEndian.Uint32(w.hdr[4:])); corr != w.corr {
		return nil, fmt.Errorf("fetcher: correlation id %d, want %d", corr, w.corr)
	}
	if size < 4 || size > maxResponseSize {
		return nil, fmt.Errorf("fetcher: fetch response of %d bytes", size)
	}
	pb := p.response(int(size) - 4)
	var sc *crcScanner
	if w.checkCRCs {
		sc = newCRCScanner(w.version, pb.b)
	}
	if err := w.readBody(pb.b, sc); err != nil {
		pb.release()
		return nil, err
	}
	resp, err := w.parse(pb.b)
	if err != nil {
		pb.release()
		return nil, fmt.Errorf("%w: %w", errMalformed, err)
	}
	if sc != nil {
		for i := range min(len(resp.blocks), len(sc.verified)) {
			resp.blocks[i].verified = sc.verified[i]
		}
	}
	resp.pb = pb
	return resp, nil
}

// readBody fills buf from the connection, at most readPiece bytes at a
// time, and lets sc, if any, verify the checksums of what each read
// brought while it is in the cache.
func (w *wireConn) readBody(buf []byte, sc *crcScanner) error {
	if sc == nil {
		_, err := io.ReadFull(w.conn, buf)
		return err
	}
	for filled := 0; filled < len(buf); {
		n, err := w.conn.Read(buf[filled:min(len(buf), filled+readPiece)])
		filled += n
		if n > 0 {
			sc.advance(filled)
		}
		if err != nil {
			if errors.Is(err, io.EOF) && filled < len(buf) {
				err = io.ErrUnexpectedEOF
			}
			if filled == len(buf) {
				break
			}
			return err
		}
	}
	return nil
}

// flexible reports whether Fetch version v uses the flexible encoding
// (KIP-482): compact strings and arrays, tagged fields.
func flexible(v int16) bool { return v >= 12 }

// encode appends the framed request to b.
func (w *wireConn) encode(b []byte, req *fetchRequest) []byte {
	v := w.version
	flex := flexible(v)
	b = append(b, 0, 0, 0, 0) // size, set below
	b = binary.BigEndian.AppendUint16(b, apiKeyFetch)
	b = binary.BigEndian.AppendUint16(b, uint16(v))
	b = binary.BigEndian.AppendUint32(b, uint32(w.corr))
	b = binary.BigEndian.AppendUint16(b, uint16(len(w.clientID)))
	b = append(b, w.clientID...)
	if flex {
		b = append(b, 0) // header tagged fields
	}
	b = binary.BigEndian.AppendUint32(b, 0xffffffff) // replica id -1
	b = binary.BigEndian.AppendUint32(b, uint32(req.maxWait))
	b = binary.BigEndian.AppendUint32(b, uint32(req.minBytes))
	if v >= 3 {
		b = binary.BigEndian.AppendUint32(b, uint32(req.maxBytes))
	}
	if v >= 4 {
		iso := byte(0)
		if req.readCommitted {
			iso = 1
		}
		b = append(b, iso)
	}
	if v >= 7 {
		// No fetch session (KIP-227): every request is a full one.
		b = binary.BigEndian.AppendUint32(b, 0)          // session id
		b = binary.BigEndian.AppendUint32(b, 0xffffffff) // session epoch -1
	}
	// Partitions grouped by topic, in the order topics first appear.
	nTopics := 0
	for i := range req.parts {
		if firstOfTopic(req.parts, i) {
			nTopics++
		}
	}
	b = appendArrayLen(b, nTopics, flex)
	for i, rp := range req.parts {
		if !firstOfTopic(req.parts, i) {
			continue
		}
		topic := rp.ps.tp.Topic
		b = appendString(b, topic, flex)
		n := 0
		for _, q := range req.parts[i:] {
			if q.ps.tp.Topic == topic {
				n++
			}
		}
		b = appendArrayLen(b, n, flex)
		for j := i; j < len(req.parts); j++ {
			q := req.parts[j]
			if q.ps.tp.Topic != topic {
				continue
			}
			size := q.ps.pti.FetchSize
			if req.sizes != nil {
				size = req.sizes[j]
			}
			b = binary.BigEndian.AppendUint32(b, uint32(q.ps.tp.Partition))
			if v >= 9 {
				b = binary.BigEndian.AppendUint32(b, uint32(q.ps.epoch))
			}
			b = binary.BigEndian.AppendUint64(b, uint64(q.offset))
			if v >= 12 {
				b = binary.BigEndian.AppendUint32(b, 0xffffffff) // last fetched epoch -1
			}
			if v >= 5 {
				b = binary.BigEndian.AppendUint64(b, 0xffffffffffffffff) // log start offset -1
			}
			b = binary.BigEndian.AppendUint32(b, uint32(size))
			if flex {
				b = append(b, 0)
			}
		}
		if flex {
			b = append(b, 0)
		}
	}
	if v >= 7 {
		b = appendArrayLen(b, 0, flex) // forgotten topics
	}
	if v >= 11 {
		b = appendString(b, "", flex) // rack id
	}
	if flex {
		b = append(b, 0)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// firstOfTopic reports whether parts[i] is the first of its topic.
func firstOfTopic(parts []reqPart, i int) bool {
	for _, q := range parts[:i] {
		if q.ps.tp.Topic == parts[i].ps.tp.Topic {
			return false
		}
	}
	return true
}

func appendArrayLen(b []byte, n int, flex bool) []byte {
	if flex {
		return binary.AppendUvarint(b, uint64(n)+1)
	}
	return binary.BigEndian.AppendUint32(b, uint32(n))
}

func appendString(b []byte, s string, flex bool) []byte {
	if flex {
		b = binary.AppendUvarint(b, uint64(len(s))+1)
	} else {
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	}
	return append(b, s...)
}

// parse parses a fetch response body (after the correlation id).
func (w *wireConn) parse(buf []byte) (*fetchResponse, error) {
	v := w.version
	flex := flexible(v)
	r := reader{b: buf}
	if flex {
		r.skipTags()
	}
	resp := &fetchResponse{buf: buf}
	if v >= 1 {
		r.int32() // throttle time
	}
	if v >= 7 {
		resp.errCode = r.int16()
		r.int32() // session id
	}
	nTopics := r.arrayLen(flex)
	for range nTopics {
		if r.err != nil {
			break
		}
		topic := w.intern(r.bytes(flex, false))
		nParts := r.arrayLen(flex)
		for range nParts {
			if r.err != nil {
				break
			}
			blk := respBlock{topic: topic, partition: r.int32(), err: sarama.KError(r.int16()), hwm: r.int64()}
			if v >= 4 {
				r.int64() // last stable offset
				if v >= 5 {
					r.int64() // log start offset
				}
				nAborted := r.arrayLen(flex)
				if nAborted > 0 {
					blk.aborted = make([]abortedTxn, 0, min(nAborted, r.remaining()/16))
				}
				for range nAborted {
					if r.err != nil {
						break
					}
					blk.aborted = append(blk.aborted, abortedTxn{producerID: r.int64(), firstOffset: r.int64()})
					if flex {
						r.skipTags()
					}
				}
			}
			if v >= 11 {
				r.int32() // preferred read replica
			}
			blk.records = r.bytes(flex, true)
			if flex {
				r.skipTags()
			}
			resp.blocks = append(resp.blocks, blk)
		}
		if flex {
			r.skipTags()
		}
	}
	if flex {
		r.skipTags()
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(resp.blocks) > 16 {
		resp.index = make(map[tpKey]int, len(resp.blocks))
		for i, b := range resp.blocks {
			resp.index[tpKey{b.topic, b.partition}] = i
		}
	}
	return resp, nil
}

// intern returns b as a string, the same string for the same topic.
func (w *wireConn) intern(b []byte) string {
	if s, ok := w.topics[string(b)]; ok {
		return s
	}
	if w.topics == nil {
		w.topics = map[string]string{}
	}
	s := string(b)
	w.topics[s] = s
	return s
}

// reader reads the big-endian fields of a Kafka message. The first error
// sticks; later reads return zero values.
type reader struct {
	b   []byte
	off int
	err error
}

var errShort = errors.New("fetcher: short buffer")

func (r *reader) remaining() int { return len(r.b) - r.off }

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || r.remaining() < n {
		r.err = errShort
		return false
	}
	return true
}

func (r *reader) int8() int8 {
	if !r.need(1) {
		return 0
	}
	r.off++
	return int8(r.b[r.off-1])
}

func (r *reader) int16() int16 {
	if !r.need(2) {
		return 0
	}
	r.off += 2
	return int16(binary.BigEndian.Uint16(r.b[r.off-2:]))
}

func (r *reader) int32() int32 {
	if !r.need(4) {
		return 0
	}
	r.off += 4
	return int32(binary.BigEndian.Uint32(r.b[r.off-4:]))
}

func (r *reader) int64() int64 {
	if !r.need(8) {
		return 0
	}
	r.off += 8
	return int64(binary.BigEndian.Uint64(r.b[r.off-8:]))
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	x, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.off += n
	return x
}

// varint reads a zig-zag varint; one-byte values (most lengths, deltas
// and counts of small records) take the inlined fast path.
func (r *reader) varint() int64 {
	if r.err == nil && r.off < len(r.b) {
		if c := r.b[r.off]; c < 0x80 {
			r.off++
			return int64(c>>1) ^ -int64(c&1)
		}
	}
	return r.varintSlow()
}

func (r *reader) varintSlow() int64 {
	if r.err != nil {
		return 0
	}
	x, next := varintAtSlow(r.b, r.off)
	if next < 0 {
		r.err = errShort
		return 0
	}
	r.off = next
	return x
}

// arrayLen reads an array length; a null array counts as empty.
func (r *reader) arrayLen(flex bool) int {
	var n int64
	if flex {
		n = int64(r.uvarint()) - 1
	} else {
		n = int64(r.int32())
	}
	if n < 0 {
		return 0
	}
	if n > int64(r.remaining()) {
		r.err = errShort
		return 0
	}
	return int(n)
}

// bytes reads a string or byte string (int16 length for strings, int32
// for bytes; compact forms when flex). A null one is nil.
func (r *reader) bytes(flex, int32Len bool) []byte {
	var n int64
	switch {
	case flex:
		n = int64(r.uvarint()) - 1
	case int32Len:
		n = int64(r.int32())
	default:
		n = int64(r.int16())
	}
	return r.slice(n)
}

// slice returns the next n bytes, capped so that appending to them cannot
// overwrite what follows; nil for a negative n (a null string) or after an
// error.
func (r *reader) slice(n int64) []byte {
	if n < 0 || r.err != nil {
		return nil
	}
	if !r.need(int(min(n, 1<<31-1))) {
		return nil
	}
	r.off += int(n)
	return r.b[r.off-int(n) : r.off : r.off]
}

// skipTags skips a tagged-field section.
func (r *reader) skipTags() {
	n := r.uvarint()
	for range n {
		if r.err != nil {
			return
		}
		r.uvarint() // tag
		size := r.uvarint()
		if size > uint64(r.remaining()) {
			r.err = errShort
			return
		}
		r.off += int(size)
	}
}
