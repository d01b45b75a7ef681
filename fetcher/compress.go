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
		return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxDecompressed))
	})
	lz4Readers  = sync.Pool{New: func() any { return lz4.NewReader(nil) }}
	gzipReaders sync.Pool
)

// decompress returns the decompressed form of data, in a buffer of its own
// (messages alias it). sizeHint, if positive, is a guess of its size.
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
		return d.DecodeAll(data, make([]byte, 0, max(sizeHint, 2*len(data))))
	}
	return nil, fmt.Errorf("fetcher: unknown compression codec %d", codec)
}

// readAllBounded reads r to its end, at most maxDecompressed bytes.
func readAllBounded(r io.Reader, sizeHint int) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, max(sizeHint, 4096)))
	n, err := buf.ReadFrom(io.LimitReader(r, maxDecompressed+1))
	if err != nil {
		return nil, err
	}
	if n > maxDecompressed {
		return nil, errTooLargeDecompressed
	}
	return buf.Bytes(), nil
}
