package fetch

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// The sizes compressed payloads declare, read before anything is allocated
// on their word: a hostile or corrupt payload of a few bytes can declare
// gigabytes.

// Snappy, as Kafka uses it: a raw snappy block, or the xerial framing of
// snappy-java (a 16-byte header, then blocks each preceded by its length,
// a big-endian int32).
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderLen = 16

var errSnappyFraming = errors.New("malformed snappy (xerial) framing")

// errImpossibleSize: a compressed payload declares more output than its
// bytes can encode in its format. It is corrupt, whatever the limit: a
// larger MaxDecodedBytes would not let it through.
var errImpossibleSize = errors.New("compressed payload declares more output than its bytes can hold")

// snappyMaxLen is the most a snappy block of n bytes can decode to: its
// densest element, a copy with a 2-byte offset, writes 64 bytes from 3.
// (s2's repeat codes go further, but they are not snappy: Kafka's clients
// never write them, and Java's consumer cannot read them.)
func snappyMaxLen(n int) uint64 { return uint64(n) * 64 / 3 }

// decompressSnappy decompresses a snappy payload of at most limit bytes:
// the declared length of every block is checked, and their sum against
// limit, before the output is allocated (or dst used, when it is large
// enough), then each block is decoded in place into it.
func decompressSnappy(data []byte, limit int, dst []byte) ([]byte, error) {
	total, err := snappyLen(data, limit)
	if err != nil {
		return nil, err
	}
	out := dst[:0]
	if cap(out) < total {
		out = make([]byte, total)
	}
	out = out[:total]
	if len(data) < len(xerialMagic) || !bytes.Equal(data[:len(xerialMagic)], xerialMagic) {
		if _, err := s2.Decode(out, data); err != nil {
			return nil, err
		}
		return out, nil
	}
	at := 0
	for blk := range xerialBlocks(data) {
		n, _ := s2.DecodedLen(blk)
		if _, err := s2.Decode(out[at:at+n], blk); err != nil {
			return nil, err
		}
		at += n
	}
	return out, nil
}

// snappyLen returns the length a snappy payload (a raw block or xerial
// framing) declares: errImpossibleSize if a block declares more than its
// bytes can hold (see snappyMaxLen), else errOverLimit past limit.
func snappyLen(data []byte, limit int) (int, error) {
	if len(data) < len(xerialMagic) || !bytes.Equal(data[:len(xerialMagic)], xerialMagic) {
		n, err := snappyBlockLen(data)
		if err != nil {
			return 0, err
		}
		if n > limit {
			return 0, errOverLimit
		}
		return n, nil
	}
	total := 0
	for blk, err := range xerialBlocks(data) {
		if err != nil {
			return 0, err
		}
		n, err := snappyBlockLen(blk)
		if err != nil {
			return 0, err
		}
		total = min(total+n, limit+1) // every block is checked before the total
	}
	if total > limit {
		return 0, errOverLimit
	}
	return total, nil
}

// snappyBlockLen returns the length a snappy block declares,
// errImpossibleSize if its bytes cannot hold that much.
func snappyBlockLen(blk []byte) (int, error) {
	n, err := s2.DecodedLen(blk)
	if err != nil {
		return 0, err
	}
	if uint64(n) > snappyMaxLen(len(blk)) {
		return 0, errImpossibleSize
	}
	return n, nil
}

// xerialBlocks yields the snappy blocks of a payload in xerial framing, or
// an error for a framing that is cut. Fewer than 4 bytes after the last
// block are ignored, as snappy-java and klauspost's reader do.
func xerialBlocks(data []byte) func(yield func([]byte, error) bool) {
	return func(yield func([]byte, error) bool) {
		if len(data) == xerialHeaderLen {
			return
		}
		if len(data) < xerialHeaderLen+4 {
			yield(nil, errSnappyFraming)
			return
		}
		for pos := xerialHeaderLen; pos+4 <= len(data); {
			size := uint64(binary.BigEndian.Uint32(data[pos:]))
			pos += 4
			if size > uint64(len(data)-pos) {
				yield(nil, errSnappyFraming)
				return
			}
			if !yield(data[pos:pos+int(size)], nil) {
				return
			}
			pos += int(size)
		}
	}
}

// lz4MaxRatio bounds what an LZ4 block yields per byte: a sequence of
// 3+m bytes (token, offset, m bytes extending the match length, 255 each
// at most) copies at most 19+255·m bytes, and literals cost a byte each.
const lz4MaxRatio = 255

// lz4ContentSize returns the content size an LZ4 frame declares, if it
// declares one (frame descriptor flag bit 3: an 8-byte little-endian size
// after the FLG and BD bytes).
func lz4ContentSize(frame []byte) (uint64, bool) {
	if len(frame) < 14 || binary.LittleEndian.Uint32(frame) != lz4FrameMagic || frame[4]&0x08 == 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(frame[6:]), true
}

// lz4MaxSize returns the most an LZ4 frame can decompress to, read from
// its block headers: a compressed block of n bytes yields at most the
// frame's block size (64 KiB to 4 MiB, its BD byte) and at most
// lz4MaxRatio·n bytes, an uncompressed one its own size. ok is false when
// the frame cannot be walked (not one LZ4 frame, or cut); the decoder then
// finds out.
func lz4MaxSize(frame []byte) (size uint64, ok bool) {
	if len(frame) < 7 || binary.LittleEndian.Uint32(frame) != lz4FrameMagic {
		return 0, false
	}
	flg, bd := frame[4], frame[5]
	blockMax := uint64(1) << (8 + 2*((bd>>4)&7))
	if (bd>>4)&7 < 4 {
		return 0, false
	}
	pos := 7 // magic, FLG, BD, header checksum
	if flg&0x08 != 0 {
		pos += 8 // content size
	}
	if flg&0x01 != 0 {
		pos += 4 // dictionary id
	}
	for {
		if len(frame) < pos+4 {
			return 0, false
		}
		h := binary.LittleEndian.Uint32(frame[pos:])
		pos += 4
		if h == 0 {
			return size, true // end mark (a content checksum may follow)
		}
		n := uint64(h &^ (1 << 31))
		if h&(1<<31) != 0 {
			size += n
		} else {
			size += min(blockMax, lz4MaxRatio*n)
		}
		if n > uint64(len(frame)-pos) {
			return 0, false
		}
		pos += int(n)
		if flg&0x10 != 0 {
			pos += 4 // block checksum
		}
	}
}

// Zstd frames (RFC 8878).
const (
	zstdFrameMagic     = 0xFD2FB528
	zstdSkippableMagic = 0x184D2A50 // to 0x184D2A5F
	zstdMaxBlock       = 128 << 10
	// zstdSlack is the room the decoder wants past the output for its fast
	// copy paths (klauspost's maxCompressedBlockSizeAlloc).
	zstdSlack = zstdMaxBlock + 16
)

var errZstdFrame = errors.New("malformed zstd frame")

// zstdEmptyBlock is the size of the largest compressed block that decodes
// to nothing: its content holds only a one-byte literals section header
// and a one-byte sequences header (RFC 8878 3.1.1.3), and both say none.
const zstdEmptyBlock = 2

// zstdOutputSize reads the frame and block headers of a zstd payload and
// returns the least (atLeast) and the most (atMost) it can decompress to:
// a frame's declared content size, which the decoder enforces, or the sum
// of its blocks (a raw or RLE block says its size; a compressed block
// yields at most the smaller of the window and 128 KiB, nothing if it has
// no room for literals or sequences). Both saturate at limit+1, beyond
// which they do not matter, as does window, the largest window a frame
// needs (a single-segment frame's is its content size). A frame whose
// declared content size its blocks cannot produce, or a raw or RLE block
// larger than any block can be, is errImpossibleSize.
func zstdOutputSize(data []byte, limit int) (atLeast, atMost, window int, err error) {
	sat := uint64(limit) + 1
	add := func(a, b uint64) uint64 { return min(a+min(b, sat), sat) }
	var lo, hi, maxWindow uint64
	for len(data) >= 4 { // fewer trailing bytes are ignored, as the decoder does
		magic := binary.LittleEndian.Uint32(data)
		if magic&0xFFFFFFF0 == zstdSkippableMagic {
			if len(data) < 8 {
				return 0, 0, 0, errZstdFrame
			}
			size := uint64(binary.LittleEndian.Uint32(data[4:]))
			if size > uint64(len(data)-8) {
				return 0, 0, 0, errZstdFrame
			}
			data = data[8+size:]
			continue
		}
		if magic != zstdFrameMagic || len(data) < 5 {
			return 0, 0, 0, errZstdFrame
		}
		fhd := data[4]
		pos := 5
		single := fhd&0x20 != 0
		var window uint64
		if !single {
			if len(data) <= pos {
				return 0, 0, 0, errZstdFrame
			}
			wd := data[pos]
			pos++
			base := uint64(1) << (10 + wd>>3)
			window = base + base/8*uint64(wd&7)
		}
		pos += [4]int{0, 1, 2, 4}[fhd&3] // dictionary id
		fcsLen := [4]int{0, 2, 4, 8}[fhd>>6]
		if fcsLen == 0 && single {
			fcsLen = 1
		}
		if len(data) < pos+fcsLen {
			return 0, 0, 0, errZstdFrame
		}
		var fcs uint64
		switch fcsLen {
		case 1:
			fcs = uint64(data[pos])
		case 2:
			fcs = uint64(binary.LittleEndian.Uint16(data[pos:])) + 256
		case 4:
			fcs = uint64(binary.LittleEndian.Uint32(data[pos:]))
		case 8:
			fcs = binary.LittleEndian.Uint64(data[pos:])
		}
		pos += fcsLen
		if single {
			window = fcs
		}
		maxWindow = max(maxWindow, min(window, sat))
		maxBlock := min(window, zstdMaxBlock)
		var blocksLo, blocksHi uint64
		for {
			if len(data) < pos+3 {
				return 0, 0, 0, errZstdFrame
			}
			bh := uint32(data[pos]) | uint32(data[pos+1])<<8 | uint32(data[pos+2])<<16
			pos += 3
			size := uint64(bh >> 3)
			switch (bh >> 1) & 3 {
			case 0: // raw
				if size > zstdMaxBlock {
					return 0, 0, 0, errImpossibleSize
				}
				blocksLo, blocksHi = add(blocksLo, size), add(blocksHi, size)
			case 1: // RLE: one byte repeated size times
				if size > zstdMaxBlock {
					return 0, 0, 0, errImpossibleSize
				}
				blocksLo, blocksHi = add(blocksLo, size), add(blocksHi, size)
				size = 1
			case 2: // compressed
				if size > zstdEmptyBlock {
					blocksHi = add(blocksHi, maxBlock)
				}
			default:
				return 0, 0, 0, errZstdFrame
			}
			if size > uint64(len(data)-pos) {
				return 0, 0, 0, errZstdFrame
			}
			pos += int(size)
			if bh&1 != 0 {
				break
			}
		}
		if fhd&0x04 != 0 { // content checksum
			pos += 4
		}
		if len(data) < pos {
			return 0, 0, 0, errZstdFrame
		}
		data = data[pos:]
		if fcsLen > 0 {
			// The blocks must produce exactly the declared size; the
			// bounds are exact below limit+1.
			if min(fcs, sat) > blocksHi || (blocksLo < sat && fcs < blocksLo) {
				return 0, 0, 0, errImpossibleSize
			}
			lo, hi = add(lo, fcs), add(hi, fcs)
		} else {
			lo, hi = add(lo, blocksLo), add(hi, blocksHi)
		}
	}
	return int(lo), int(hi), int(maxWindow), nil
}

// libzstd, when the package is built with the zkconsumer_libzstd tag (and
// cgo), decodes a zstd payload into dst, whose capacity holds its output,
// with the C library; ok is false for what it leaves to the Go decoder.
var libzstd func(data, dst []byte) (out []byte, ok bool, err error)

// decompressZstd decompresses a zstd payload of at most limit bytes into
// buf (see zstdOutputSize for atMost). When atMost is at most limit the
// output cannot exceed it: the decoder fills buf and, should the payload
// really produce more than buf holds, grows it itself, by what it writes.
// Otherwise (compressed blocks that may or may not fill their 128 KiB)
// the decoder is held to buf's capacity, which grows geometrically each
// time the output fills it, up to limit bytes (errOverLimit past them).
// Either way the buffer grows only with output the payload really
// produced, never on what its headers allow.
func decompressZstd(data []byte, limit, atMost int, buf []byte) ([]byte, error) {
	if libzstd != nil && atMost <= min(limit, cap(buf)) {
		if out, ok, err := libzstd(data, buf[:0]); ok {
			return out, err
		}
	}
	return withZstd(func(dec zstdPair) ([]byte, error) {
		if atMost <= limit {
			return dec.open.DecodeAll(data, buf[:0])
		}
		for {
			size := min(cap(buf), limit)
			out, err := dec.capped.DecodeAll(data, buf[:0:size])
			if !errors.Is(err, zstd.ErrDecoderSizeExceeded) {
				return out, err
			}
			if size >= limit {
				return buf[:0], errOverLimit
			}
			buf = make([]byte, 0, min(max(2*size, startExtra), limit))
		}
	})
}
