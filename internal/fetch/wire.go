package fetch

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
// response as bytes lets the fetcher parse it as it arrives (respParser),
// send the next request as soon as it is read, and decode each partition
// only when it enqueues it.
//
// Sarama and the fetcher take turns on the connection, never overlapping:
// sarama reads from it only while one of its own requests is pending, and
// its read buffer is empty between two requests because a broker sends
// nothing unasked.

// errMalformed wraps the errors of a fetch response whose structure (not
// its records) cannot be parsed.
var errMalformed = errors.New("malformed fetch response")

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
	// response is read (see respParser).
	checkCRCs bool
	wbuf      []byte
	hdr       [8]byte
	// ix finds the partitions of the request last encoded in its
	// response, which parser parses as it is read.
	ix     reqIndex
	parser respParser
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

// size is the fetch size the request asks for parts[i].
func (req *fetchRequest) size(i int) int32 {
	if req.sizes != nil {
		return req.sizes[i]
	}
	return req.parts[i].ps.pti.FetchSize
}

// respBlock is one partition of a fetch response.
type respBlock struct {
	topic     string
	partition int32
	err       sarama.KError
	hwm       int64
	aborted   abortedTxns
	// records is the partition's record data, aliasing the response
	// buffer; nil when the broker sent none.
	records []byte
	// verified: the checksums of the record batches before this position
	// in records were verified as the response was read.
	verified int
	// scan is what the entry headers of records tell for a fetch at
	// scanAt of fetch size scanSize, when scanned (see scanFor).
	scan     scanned
	scanAt   int64
	scanSize int32
	scanned  bool
	// missing: the response has no entry for this partition of the
	// request.
	missing bool
}

// fetchResponse is a fetch response, parsed down to each partition's
// record bytes.
type fetchResponse struct {
	errCode int16
	// blocks are the blocks of the request's partitions, blocks[i] that
	// of parts[i] (missing if the response has none); entries for
	// partitions the request did not ask for are not kept.
	blocks []respBlock
	parts  []reqPart
	// buf is the response body every block's records alias.
	buf []byte
	// pb is the pooled buffer buf lives in, held once by whoever
	// processes the response (see fetcher.doneWith).
	pb *pbuf
}

// blockFor returns the block of rp, the i-th partition of the request the
// response answers; nil if the response has none.
func (r *fetchResponse) blockFor(i int, rp reqPart) *respBlock {
	if i < len(r.parts) && i < len(r.blocks) && r.parts[i].ps == rp.ps {
		if b := &r.blocks[i]; !b.missing {
			return b
		}
		return nil
	}
	return r.block(rp.ps.tp.Topic, rp.ps.tp.Partition)
}

// block returns the block of a partition, nil if the response has none.
func (r *fetchResponse) block(topic string, partition int32) *respBlock {
	for i := range r.blocks {
		if b := &r.blocks[i]; !b.missing && b.partition == partition && b.topic == topic {
			return b
		}
	}
	return nil
}

// roundTrip sends req and reads its response into a buffer from p, which
// the response holds once (resp.pb). A response larger than the request
// allows (responseLimit) is not read into memory: it is read past and
// refused with a *responseSizeError, the connection left ready for the
// next request.
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
		return nil, fmt.Errorf("correlation id %d, want %d", corr, w.corr)
	}
	if size < 4 || size > maxResponseSize {
		return nil, fmt.Errorf("fetch response of %d bytes", size)
	}
	if limit := w.responseLimit(req); int64(size) > limit {
		// Read past it, keeping nothing, so that the connection stays
		// in step.
		if _, err := io.CopyN(io.Discard, w.conn, int64(size)-4); err != nil {
			return nil, err
		}
		return nil, &responseSizeError{size: int64(size), limit: limit, partitions: len(req.parts)}
	}
	pb := p.response(int(size) - 4)
	resp, err := w.readBody(pb.b)
	if err != nil {
		pb.release()
		return nil, err
	}
	resp.pb = pb
	return resp, nil
}

// readBody fills buf from the connection, at most readPiece bytes at a
// time, and parses what each read brought while it is in the cache (see
// respParser).
func (w *wireConn) readBody(buf []byte) (*fetchResponse, error) {
	p := w.startParse(buf)
	// The connection keeps nothing of a response it did not hand over.
	defer func() { w.parser = respParser{} }()
	for filled := 0; filled < len(buf); {
		n, err := w.conn.Read(buf[filled:min(len(buf), filled+readPiece)])
		filled += n
		if n > 0 {
			p.advance(filled)
		}
		if err != nil {
			if errors.Is(err, io.EOF) && filled < len(buf) {
				err = io.ErrUnexpectedEOF
			}
			if filled == len(buf) {
				break
			}
			return nil, err
		}
	}
	resp, err := p.finish()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errMalformed, err)
	}
	return resp, nil
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
	w.ix.reset(req.parts)
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
			size := req.size(j)
			w.ix.add(j)
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

// reader is the package's one reader of bytes: the big-endian integers,
// varints and length-prefixed strings of fetch responses, record batches
// and messages. The first error sticks: it moves the reader to the end of
// its bytes, and later reads return zero values.
type reader struct {
	b   []byte
	off int
	err error
}

var errShort = errors.New("short buffer")

// fail records a read past the bytes.
func (r *reader) fail() {
	r.err = errShort
	r.off = len(r.b)
}

func (r *reader) remaining() int { return len(r.b) - r.off }

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || r.remaining() < n {
		r.fail()
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
		r.fail()
		return 0
	}
	r.off += n
	return x
}

// varint reads a zig-zag varint (at most 10 bytes, as binary.Varint reads
// it). It is small enough to be inlined: most lengths, deltas and counts
// of records take one byte.
func (r *reader) varint() int64 {
	var x uint64
	for i, c := range r.b[r.off:] {
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			if i == 9 && c > 1 {
				break // overflow
			}
			r.off += i + 1
			return int64(x>>1) ^ -int64(x&1)
		}
		if i == 9 {
			break
		}
	}
	r.fail()
	return 0
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
		r.fail()
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
			r.fail()
			return
		}
		r.off += int(size)
	}
}
