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

// decompress returns the decompressed form of data, in a buffer of its own
// (messages alias it). sizeHint is a guess of its size.
func decompress(codec int8, data []byte, sizeHint int) ([]byte, error) {
	switch codec {
	case codecGzip:
		var zr *gzip.Reader
		if v := gzipReaders.Get(); v != nil {
			zr = v.(*gzip.Reader)
			if err := zr.Reset(bytes.NewReader(data)); err != nil {
				return nil, err
			}
		} else {
			var err error
			if zr, err = gzip.NewReader(bytes.NewReader(data)); err != nil {
				return nil, err
			}
		}
		out, err := readAllBounded(zr, sizeHint)
		gzipReaders.Put(zr)
		return out, err
	case codecSnappy:
		out, err := snappy.Decode(data)
		if err == nil && len(out) > maxDecompressed {
			return nil, errTooLargeDecompressed
		}
		return out, err
	case codecLZ4:
		zr := lz4Readers.Get().(*lz4.Reader)
		zr.Reset(bytes.NewReader(data))
		out, err := readAllBounded(zr, sizeHint)
		lz4Readers.Put(zr)
		return out, err
	case codecZstd:
		d, err := zstdDecoder()
		if err != nil {
			return nil, err
		}
		return d.DecodeAll(data, make([]byte, 0, min(sizeHint, maxDecompressed)))
	}
	return nil, fmt.Errorf("fetcher: unknown compression codec %d", codec)
}

// readAllBounded reads r to its end, at most maxDecompressed bytes, into a
// buffer of sizeHint bytes to start with, doubled as needed.
func readAllBounded(r io.Reader, sizeHint int) ([]byte, error) {
	buf := make([]byte, 0, min(max(sizeHint, 4096), maxDecompressed+1))
	for {
		if len(buf) == cap(buf) {
			if len(buf) > maxDecompressed {
				return nil, errTooLargeDecompressed
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if len(buf) > maxDecompressed {
				return nil, errTooLargeDecompressed
			}
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
