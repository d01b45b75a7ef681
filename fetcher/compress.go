package fetcher

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	snappy "github.com/klauspost/compress/snappy/xerial"
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

// maxDecompressed bounds what one compressed batch may decompress to, so
// that a hostile or broken payload cannot exhaust memory.
const maxDecompressed = 100 << 20

var errTooLargeDecompressed = errors.New("fetcher: batch decompresses to more than 100 MiB")

var (
	zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		// The frame checksum is not verified: the batch's CRC-32C covers
		// the compressed bytes already (check.crcs), and xxhash took 8 %
		// of the CPU on zstd batches of 1 KiB messages.
		return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxDecompressed),
			zstd.IgnoreChecksum(true))
	})
	lz4Readers  = sync.Pool{New: func() any { return lz4.NewReader(nil) }}
	gzipReaders sync.Pool
)

// scratchBufs holds the buffers compressed batches are decompressed into
// before their exact-size copy.
var scratchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1<<20); return &b }}

// decompress returns the decompressed form of data, in a buffer of its own
// and of its exact size (messages alias it, so slack would stay pinned
// with them). It decompresses into a pooled scratch buffer first and
// copies from there: make and copy together skip zeroing the new buffer,
// which is cheaper than guessing a size and zeroing the slack.
func decompress(codec int8, data []byte) ([]byte, error) {
	if codec == codecSnappy {
		// Snappy's header tells the size: exact already.
		out, err := snappy.Decode(data)
		if err == nil && len(out) > maxDecompressed {
			return nil, errTooLargeDecompressed
		}
		return out, err
	}
	sp := scratchBufs.Get().(*[]byte)
	defer scratchBufs.Put(sp)
	var (
		scratch []byte
		err     error
	)
	switch codec {
	case codecGzip:
		var zr *gzip.Reader
		if v := gzipReaders.Get(); v != nil {
			zr = v.(*gzip.Reader)
			err = zr.Reset(bytes.NewReader(data))
		} else {
			zr, err = gzip.NewReader(bytes.NewReader(data))
		}
		if err != nil {
			return nil, err
		}
		scratch, err = readAllBounded(zr, (*sp)[:0])
		gzipReaders.Put(zr)
	case codecLZ4:
		zr := lz4Readers.Get().(*lz4.Reader)
		zr.Reset(bytes.NewReader(data))
		scratch, err = readAllBounded(zr, (*sp)[:0])
		lz4Readers.Put(zr)
	case codecZstd:
		var d *zstd.Decoder
		if d, err = zstdDecoder(); err == nil {
			scratch, err = d.DecodeAll(data, (*sp)[:0])
		}
	default:
		return nil, fmt.Errorf("fetcher: unknown compression codec %d", codec)
	}
	if cap(scratch) <= maxDecompressed+1 {
		*sp = scratch[:0]
	}
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(scratch))
	copy(out, scratch)
	return out, nil
}

// readAllBounded reads r to its end, at most maxDecompressed bytes,
// appending to buf, which it grows as needed.
func readAllBounded(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			if len(buf) > maxDecompressed {
				return buf, errTooLargeDecompressed
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if len(buf) > maxDecompressed {
				return buf, errTooLargeDecompressed
			}
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
