package fetch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression codecs, as in the attributes of a message or record batch.
const (
	codecNone   = 0
	codecGzip   = 1
	codecSnappy = 2
	codecLZ4    = 3
	codecZstd   = 4
)

// errOverLimit: a payload decompresses to more bytes than its caller
// allowed (see decompress). Nothing beyond the limit was allocated.
var errOverLimit = errors.New("decompressed size over the limit")

// zstdMaxWindow is the largest zstd window accepted, libzstd's default
// limit for decoders (ZSTD_WINDOWLOG_LIMIT_DEFAULT, 2^27), which Java's
// consumer (zstd-jni) and librdkafka apply too. decompressZstd decodes
// whole frames into their output buffer, which serves as the window, so the
// window costs no memory of its own; this only keeps the set of frames
// accepted the usual one.
const zstdMaxWindow = 1 << 27

// maxPooledScratch is the largest scratch buffer kept for reuse: larger
// ones, for unusually large batches, are left to the garbage collector
// rather than held by the pool.
const maxPooledScratch = 4 << 20

var (
	lz4Readers  = sync.Pool{New: func() any { return lz4.NewReader(nil) }}
	gzipReaders sync.Pool
)

// zstdPair holds two zstd decoders of one concurrency each: open for
// payloads whose output is known to fit the buffer it is given, capped
// (output limited to the buffer's capacity, on slower paths) for the
// others.
type zstdPair struct{ open, capped *zstd.Decoder }

// zstdPairs hands out GOMAXPROCS pairs, one per concurrent decoding. A
// decoder keeps a reference to the last buffer it decoded into until it
// decodes again, which would pin a chunk's decompressed batch (or a pooled
// scratch buffer) after the chunk is gone: each use ends with an empty
// decode that drops it (see withZstd).
var zstdPairs = sync.OnceValues(func() (chan zstdPair, error) {
	// The frame checksum is not verified: the batch's CRC-32C covers the
	// compressed bytes already (check.crcs), and xxhash took 8 % of the
	// CPU on zstd batches of 1 KiB messages. The sizes are checked by
	// decompressZstd, before the decoders run: their own memory limit is
	// only a backstop.
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1 << 40),
		zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.IgnoreChecksum(true)}
	n := runtime.GOMAXPROCS(0)
	pairs := make(chan zstdPair, n)
	for range n {
		open, err := zstd.NewReader(nil, opts...)
		if err != nil {
			return nil, err
		}
		capped, err := zstd.NewReader(nil, append(opts, zstd.WithDecodeAllCapLimit(true))...)
		if err != nil {
			return nil, err
		}
		pairs <- zstdPair{open: open, capped: capped}
	}
	return pairs, nil
})

// withZstd runs fn with a pair of zstd decoders, then makes them forget
// the buffers fn gave them.
func withZstd(fn func(zstdPair) ([]byte, error)) ([]byte, error) {
	pairs, err := zstdPairs()
	if err != nil {
		return nil, err
	}
	p := <-pairs
	defer func() {
		_, _ = p.open.DecodeAll(nil, nil)
		_, _ = p.capped.DecodeAll(nil, nil)
		pairs <- p
	}()
	return fn(p)
}

// scratchBufs holds the buffers compressed batches of up to
// maxPooledScratch bytes are decompressed into before their exact-size
// copy.
var scratchBufs = sync.Pool{New: func() any { return new([]byte) }}

// decompress returns the decompressed form of data, of at most limit
// bytes. Sizes the payload declares (the length of a snappy block, the
// content size of a zstd or lz4 frame, the blocks of a zstd frame) are
// checked against what its bytes can hold (errImpossibleSize: corrupt)
// and against limit before anything is allocated on their word, and
// the streamed codecs stop reading past limit: a payload that would
// decompress to more fails with errOverLimit, having allocated at most
// about twice limit (less when it declares its size). The caller charges
// cap of the result: messages alias it, so what it holds stays pinned with
// them.
//
// Payloads of up to maxPooledScratch bytes are decompressed into a pooled
// scratch buffer and copied from there into one of their exact size: make
// and copy together skip zeroing the new buffer, which is cheaper than
// guessing a size and zeroing the slack. Larger ones are decompressed into
// a buffer of their own, kept as it is unless its slack is large.
func decompress(codec int8, data []byte, limit int) ([]byte, error) {
	limit = max(limit, 0)
	if codec == codecSnappy {
		return decompressSnappy(data, limit, nil)
	}
	hint, room, zstdMax, err := outputSize(codec, data, limit)
	if err != nil {
		return nil, err
	}
	var (
		sp  *[]byte
		buf []byte
	)
	if hint+room <= maxPooledScratch {
		sp = scratchBufs.Get().(*[]byte)
		defer scratchBufs.Put(sp)
		buf = slices.Grow((*sp)[:0], hint+room)
	} else {
		buf = make([]byte, 0, hint+room)
	}
	buf, err = decompressInto(codec, data, limit, zstdMax, buf)
	if sp != nil && cap(buf) <= maxPooledScratch {
		*sp = buf[:0]
	}
	if err != nil {
		return nil, err
	}
	if sp == nil && cap(buf) <= limit && cap(buf)-len(buf) <= len(buf)/8+zstdSlack {
		return buf, nil
	}
	out := make([]byte, len(buf))
	copy(out, buf)
	return out, nil
}

// decompressPooled is decompress into a buffer of p's (recycling): the
// result aliases the returned buffer, which the caller holds once. A
// payload whose buffer and the slack its decoder wants would exceed limit
// gets a buffer of its exact size instead (nil pbuf), as decompress does.
func decompressPooled(p *pools, codec int8, data []byte, limit int) ([]byte, *pbuf, error) {
	limit = max(limit, 0)
	size, unknown := 0, false
	if codec == codecSnappy {
		n, err := snappyLen(data, limit)
		if err != nil {
			return nil, nil, err
		}
		size = n
	} else {
		hint, room, _, err := outputSize(codec, data, limit)
		if err != nil {
			return nil, nil, err
		}
		size, unknown = hint+room, hint == 0
	}
	if size > limit {
		// The pooled buffer's slack would not fit: an exact copy of its
		// own instead, as without recycling.
		out, err := decompress(codec, data, limit)
		return out, nil, err
	}
	var pb *pbuf
	if unknown {
		// The payload does not say what it holds (an lz4 frame without
		// its content size, as Kafka's producers write them): any free
		// buffer the chunk can be charged for, grown as the output needs
		// (a stream's batches are alike, so the last one freed usually
		// fits); a new one has room for a usual ratio.
		pb = p.payload(0, limit, min(startSize(len(data)), limit))
	} else {
		pb = p.payload(size, min(2*size, limit), size)
	}
	var (
		out []byte
		err error
	)
	if codec == codecSnappy {
		out, err = decompressSnappy(data, limit, pb.b)
	} else {
		_, _, zstdMax, _ := outputSize(codec, data, limit)
		out, err = decompressInto(codec, data, limit, zstdMax, pb.b)
	}
	if err != nil {
		pb.release()
		return nil, nil, err
	}
	if cap(out) > limit {
		// The decoder grew the buffer past what the chunk can be
		// charged: an exact copy instead.
		exact := make([]byte, len(out))
		copy(exact, out)
		pb.release()
		return exact, nil, nil
	}
	pb.b = out
	return out, pb, nil
}

// startFactor and startExtra size the buffer a payload whose headers do
// not bound its output tightly starts with (see startSize).
const (
	startFactor = 8
	startExtra  = 64 << 10
)

// startSize is the output an n-byte compressed payload is first given room
// for when its headers only give a loose bound: what honest data of a
// usual ratio fits in. Past it, buffers grow only with the output the
// payload really produces.
func startSize(n int) int { return startFactor*n + startExtra }

// outputSize returns the output size a payload suggests (hint), the room
// its buffer needs beyond it, and for zstd the most it can decompress to;
// errOverLimit when it declares more than limit, errImpossibleSize (or a
// codec's own error) when it declares more than its bytes can hold.
//
// The sizes a payload declares (gzip's trailer, an lz4 or zstd frame's
// content size) are checked by the decoders against what the payload
// produces: one that lies makes its batch corrupt, which stops the
// partition. Bounds read from block headers are not promises: an honest
// zstd frame of empty compressed blocks decodes to nothing, so the hint
// takes at most startSize of them.
func outputSize(codec int8, data []byte, limit int) (hint, room, zstdMax int, err error) {
	room = 1
	switch codec {
	case codecGzip:
		if len(data) >= 18 { // a gzip member ends with its size, modulo 2^32
			hint = int(binary.LittleEndian.Uint32(data[len(data)-4:]))
		}
	case codecLZ4:
		if size, ok := lz4ContentSize(data); ok {
			if most, ok := lz4MaxSize(data); ok && size > most {
				return 0, 0, 0, errImpossibleSize
			}
			if size > uint64(limit) {
				return 0, 0, 0, errOverLimit
			}
			hint = int(size)
		}
	case codecZstd:
		atLeast, atMost, _, err := zstdOutputSize(data, limit)
		if err != nil {
			return 0, 0, 0, err
		}
		if atLeast > limit {
			return 0, 0, 0, errOverLimit
		}
		// atLeast is declared content and raw or RLE blocks: output the
		// decoder checks or produces as said.
		hint, room, zstdMax = atLeast+min(atMost-atLeast, startSize(len(data))), zstdSlack, atMost
	default:
		return 0, 0, 0, fmt.Errorf("unknown compression codec %d", codec)
	}
	return min(hint, limit), room, zstdMax, nil
}

// getGzip returns a gzip reader of data, a pooled one if there is one.
func getGzip(data []byte) (*gzip.Reader, error) {
	if v := gzipReaders.Get(); v != nil {
		zr := v.(*gzip.Reader)
		if err := zr.Reset(bytes.NewReader(data)); err != nil {
			return nil, err
		}
		return zr, nil
	}
	return gzip.NewReader(bytes.NewReader(data))
}

// putGzip returns zr to the pool, without its reference to the data it
// read.
func putGzip(zr *gzip.Reader) {
	_ = zr.Reset(bytes.NewReader(nil))
	gzipReaders.Put(zr)
}

// decompressInto decompresses data (gzip, lz4 or zstd) into buf, growing
// it as needed up to limit bytes of output.
func decompressInto(codec int8, data []byte, limit, zstdMax int, buf []byte) ([]byte, error) {
	buf = buf[:0]
	var err error
	switch codec {
	case codecGzip:
		zr, gerr := getGzip(data)
		if gerr != nil {
			return buf, gerr
		}
		buf, err = readAllBounded(zr, buf, limit)
		putGzip(zr)
	case codecLZ4:
		zr := lz4Readers.Get().(*lz4.Reader)
		zr.Reset(bytes.NewReader(data))
		buf, err = readAllBounded(zr, buf, limit)
		zr.Reset(nil) // drop the reference to data
		lz4Readers.Put(zr)
	case codecZstd:
		buf, err = decompressZstd(data, limit, zstdMax, buf)
	default:
		err = fmt.Errorf("unknown compression codec %d", codec)
	}
	return buf, err
}

// readAllBounded reads r to its end, appending to buf, which it grows as
// needed up to limit+1 bytes: errOverLimit if r holds more than limit.
func readAllBounded(r io.Reader, buf []byte, limit int) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return buf, errOverLimit
			}
			// One byte more than the limit tells a payload that exceeds it.
			buf = slices.Grow(buf, min(max(cap(buf), 64<<10), limit+1-len(buf)))
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), limit+1)])
		buf = buf[:len(buf)+n]
		if len(buf) > limit {
			return buf, errOverLimit
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
