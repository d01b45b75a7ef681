package fetch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// A record batch whose decompressed payload does not fit in a chunk of its
// own (more than the decoding limit) is decompressed as a stream instead:
// its records come in pieces, each a buffer of its own holding whole
// records, so that each chunk pins only the pieces its messages alias.
// Java's consumer decompresses batches as a stream in the same way, record
// by record. The decompressor's own memory is what a stream keeps between
// pieces: a zstd window (accepted up to the decoding limit), lz4 blocks
// (up to 4 MiB), gzip's 32 KiB window, one xerial snappy block (up to the
// limit). A raw snappy block cannot be streamed: one larger than the limit
// stops its partition as before (producers write those, librdkafka's, only
// for batches of a megabyte or so).

// Pieces are about 1/8 of the decoding limit, so that a chunk holds
// several, between these bounds; a record larger than that gets a piece
// of its own size.
const (
	minPiece = 64 << 10
	maxPiece = 8 << 20
)

// errStreamCut: a streamed payload ends inside a record.
var errStreamCut = errors.New("record cut by the end of the batch")

var zstdStreams = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderMaxMemory(1<<40), zstd.IgnoreChecksum(true))
	if err != nil {
		return err
	}
	return d
}}

// payloadStream yields the records of a compressed payload piece by piece.
type payloadStream struct {
	r    io.Reader
	put  func() // gives the decompressor back
	tail []byte // read past the last whole record of the last piece
	eof  bool
	// piece is the size of the next piece, up to maxPiece; need, if
	// set, the size the record at the start of tail needs.
	piece, maxPiece, need int
}

// newPayloadStream starts decompressing data with codec. limit is the
// decoding limit: a zstd frame whose window exceeds it, a snappy block
// declaring more, or a raw snappy block (which cannot be streamed) fails
// with errOverLimit. The first piece is small, the next ones twice the one
// before up to the piece size: a payload that turns out to hold little
// costs little.
func newPayloadStream(codec int8, data []byte, limit int64) (*payloadStream, error) {
	s := &payloadStream{piece: minPiece, maxPiece: int(min(max(limit/8, minPiece), maxPiece))}
	switch codec {
	case codecZstd:
		if _, _, window, err := zstdOutputSize(data, int(min(limit, 1<<40))); err != nil {
			return nil, err
		} else if int64(window) > limit {
			return nil, errOverLimit
		}
		v := zstdStreams.Get()
		dec, ok := v.(*zstd.Decoder)
		if !ok {
			return nil, v.(error)
		}
		if err := dec.Reset(bytes.NewReader(data)); err != nil {
			zstdStreams.Put(dec)
			return nil, err
		}
		s.r = dec
		s.put = func() {
			_ = dec.Reset(nil)
			zstdStreams.Put(dec)
		}
	case codecLZ4:
		zr := lz4Readers.Get().(*lz4.Reader)
		zr.Reset(bytes.NewReader(data))
		s.r = zr
		s.put = func() {
			zr.Reset(nil)
			lz4Readers.Put(zr)
		}
	case codecGzip:
		zr, err := getGzip(data)
		if err != nil {
			return nil, err
		}
		s.r = zr
		s.put = func() { putGzip(zr) }
	case codecSnappy:
		if len(data) < len(xerialMagic) || !bytes.Equal(data[:len(xerialMagic)], xerialMagic) {
			return nil, errOverLimit
		}
		for blk, err := range xerialBlocks(data) {
			if err != nil {
				return nil, err
			}
			if n, err := s2.DecodedLen(blk); err != nil {
				return nil, err
			} else if int64(n) > limit {
				return nil, errOverLimit
			}
		}
		s.r = &xerialReader{data: data, limit: int(min(limit, 1<<40))}
		s.put = func() {}
	default:
		return nil, errors.New("unknown compression codec")
	}
	return s, nil
}

// next returns the next piece: a buffer of its own holding the whole
// records that follow, at least one, and of capacity at most room
// (errOverLimit when the next record alone needs more). io.EOF: nothing
// is left.
func (s *payloadStream) next(room int) ([]byte, error) {
	size := min(s.piece, room)
	s.piece = min(2*s.piece, s.maxPiece)
	for {
		size = max(size, s.need, len(s.tail)+minRecordSize)
		if size > room {
			return nil, errOverLimit
		}
		buf := make([]byte, len(s.tail), size)
		copy(buf, s.tail)
		s.tail = nil
		for len(buf) < cap(buf) && !s.eof {
			n, err := s.r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if errors.Is(err, io.EOF) {
				s.eof = true
				break
			}
			if err != nil {
				s.tail = buf
				return nil, err
			}
		}
		end, need := wholeRecords(buf)
		if end > 0 {
			s.tail, s.need = buf[end:], 0
			return buf[:end:end], nil
		}
		if len(buf) == 0 && s.eof {
			return nil, io.EOF
		}
		if s.eof {
			return nil, errStreamCut
		}
		// The first record is larger than the piece: a piece of its size.
		s.tail = buf
		s.need = max(need, len(buf)+16)
	}
}

// empty reports whether the payload holds nothing more.
func (s *payloadStream) empty() (bool, error) {
	if len(s.tail) > 0 {
		return false, nil
	}
	if s.eof {
		return true, nil
	}
	var b [1]byte
	for {
		n, err := s.r.Read(b[:])
		if n > 0 {
			return false, nil
		}
		if errors.Is(err, io.EOF) {
			s.eof = true
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// close gives the decompressor back.
func (s *payloadStream) close() {
	if s.put != nil {
		s.put()
		s.put, s.r = nil, nil
	}
}

// wholeRecords returns the length of the whole records b starts with, and
// when there is none the size the first one needs (0 if its length is
// not complete yet, or makes no sense: the decoder then finds it
// malformed).
func wholeRecords(b []byte) (end, need int) {
	for {
		r := reader{b: b, off: end}
		length := r.varint()
		j := r.off
		if r.err != nil || length < 0 {
			if end == 0 && r.err != nil && len(b) < binary.MaxVarintLen64 {
				return 0, len(b) + binary.MaxVarintLen64
			}
			if end == 0 && length < 0 {
				// Malformed: hand it over, the decoder reports it.
				return len(b), 0
			}
			return end, 0
		}
		if length > int64(len(b)-j) {
			if end == 0 {
				return 0, j + int(min(length, 1<<40))
			}
			return end, 0
		}
		end = j + int(length)
	}
}

// xerialReader decompresses snappy in xerial framing block by block: one
// block's output at a time, its declared length checked against limit.
// The framing is read as xerialBlocks reads it.
type xerialReader struct {
	data    []byte
	limit   int
	pos     int
	started bool
	out     []byte
}

func (x *xerialReader) Read(p []byte) (int, error) {
	for len(x.out) == 0 {
		if !x.started {
			x.started = true
			if len(x.data) == xerialHeaderLen {
				x.pos = len(x.data)
			} else if len(x.data) < xerialHeaderLen+4 {
				return 0, errSnappyFraming
			} else {
				x.pos = xerialHeaderLen
			}
		}
		if x.pos+4 > len(x.data) {
			return 0, io.EOF
		}
		size := uint64(binary.BigEndian.Uint32(x.data[x.pos:]))
		x.pos += 4
		if size > uint64(len(x.data)-x.pos) {
			return 0, errSnappyFraming
		}
		blk := x.data[x.pos : x.pos+int(size)]
		x.pos += int(size)
		n, err := s2.DecodedLen(blk)
		if err != nil {
			return 0, err
		}
		if n > x.limit {
			return 0, errOverLimit
		}
		if x.out, err = s2.Decode(nil, blk); err != nil {
			return 0, err
		}
	}
	n := copy(p, x.out)
	x.out = x.out[n:]
	return n, nil
}
