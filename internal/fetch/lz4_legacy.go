package fetch

import (
	"encoding/binary"
	"math/bits"
)

// Kafka compresses a message set in format v0 with lz4 using a frame whose
// header checksum also covers the frame's magic number, against the LZ4
// frame format (KAFKA-3160). Kafka's own readers skip the checksum of v0
// frames; the lz4 decoder checks it and rejects them ("lz4: invalid header
// checksum"). decompressMessage puts the checksum the format defines into
// a v0 frame first, so that such data, which topics with a message format
// before 0.10.0 hold, reads as it does with Kafka's consumers.

// lz4FrameMagic opens every LZ4 frame (little-endian).
const lz4FrameMagic = 0x184D2204

// decompressMessage is decompress for the value of a compressed message of
// format magic (0 or 1).
func decompressMessage(magic int8, codec int8, value []byte, limit int) ([]byte, error) {
	if magic == 0 && codec == codecLZ4 {
		value = withLZ4HeaderChecksum(value)
	}
	return decompress(codec, value, limit)
}

// decompressMessagePooled is decompressMessage into a pooled buffer (see
// decompressPooled).
func decompressMessagePooled(p *pools, magic int8, codec int8, value []byte, limit int) ([]byte, *pbuf, error) {
	if magic == 0 && codec == codecLZ4 {
		value = withLZ4HeaderChecksum(value)
	}
	return decompressPooled(p, codec, value, limit)
}

// withLZ4HeaderChecksum returns frame with the header checksum the LZ4
// frame format defines: the second byte of the XXH32 of the frame
// descriptor. A frame that has it already is returned as is, any other in a
// copy (frame aliases the fetch response). What is not an LZ4 frame is left
// for the decoder to reject.
func withLZ4HeaderChecksum(frame []byte) []byte {
	if len(frame) < 7 || binary.LittleEndian.Uint32(frame) != lz4FrameMagic {
		return frame
	}
	flags := frame[4]
	end := 6 // magic, FLG, BD
	if flags&0x08 != 0 {
		end += 8 // content size
	}
	if flags&0x01 != 0 {
		end += 4 // dictionary id
	}
	if len(frame) <= end {
		return frame
	}
	want := byte(xxh32Short(frame[4:end]) >> 8)
	if frame[end] == want {
		return frame
	}
	fixed := make([]byte, len(frame))
	copy(fixed, frame)
	fixed[end] = want
	return fixed
}

// xxh32Short is XXH32 with seed 0 of an input shorter than 16 bytes (a
// frame descriptor has 2 to 14), which skips the algorithm's 16-byte
// stripes.
func xxh32Short(b []byte) uint32 {
	const (
		prime1 uint32 = 2654435761
		prime2 uint32 = 2246822519
		prime3 uint32 = 3266489917
		prime4 uint32 = 668265263
		prime5 uint32 = 374761393
	)
	h := prime5 + uint32(len(b))
	for ; len(b) >= 4; b = b[4:] {
		h += binary.LittleEndian.Uint32(b) * prime3
		h = bits.RotateLeft32(h, 17) * prime4
	}
	for _, c := range b {
		h += uint32(c) * prime5
		h = bits.RotateLeft32(h, 11) * prime1
	}
	h ^= h >> 15
	h *= prime2
	h ^= h >> 13
	h *= prime3
	h ^= h >> 16
	return h
}
