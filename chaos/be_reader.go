package chaos

import (
	"encoding/binary"
	"fmt"
	"io"
)

// beReader reads the big-endian encodings the verifier decodes after a
// run: Kafka's records of __consumer_offsets (kafka_commits.go) and
// ZooKeeper's transaction logs in Apache Jute's binary archive
// (zktxnlog.go). The first error sticks: once set, every read returns the
// zero value, and the caller checks err after a group of reads.
type beReader struct {
	b   []byte
	err error
}

// take returns the next n bytes, or nil and io.ErrUnexpectedEOF when fewer
// are left (or n is negative).
func (r *beReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = io.ErrUnexpectedEOF
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *beReader) int16() int16 {
	if p := r.take(2); p != nil {
		return int16(binary.BigEndian.Uint16(p))
	}
	return 0
}

func (r *beReader) int32() int32 {
	if p := r.take(4); p != nil {
		return int32(binary.BigEndian.Uint32(p))
	}
	return 0
}

func (r *beReader) int64() int64 {
	if p := r.take(8); p != nil {
		return int64(binary.BigEndian.Uint64(p))
	}
	return 0
}

// boolean reads one byte, true unless 0.
func (r *beReader) boolean() bool {
	p := r.take(1)
	return p != nil && p[0] != 0
}

// str reads Kafka's STRING: an int16 length (-1: null, read as "") and
// the bytes.
func (r *beReader) str() string {
	n := r.int16()
	if r.err != nil || n == -1 {
		return ""
	}
	return string(r.take(int(n)))
}

// compactStr reads Kafka's COMPACT_STRING: an unsigned-varint length+1
// (0: null, read as "") and the bytes.
func (r *beReader) compactStr() string {
	if r.err != nil {
		return ""
	}
	n, w := binary.Uvarint(r.b)
	if w <= 0 {
		r.err = io.ErrUnexpectedEOF
		return ""
	}
	r.b = r.b[w:]
	if n == 0 {
		return ""
	}
	return string(r.take(int(n - 1)))
}

// buffer reads Jute's buffer: an int32 length (-1: null, read as nil) and
// the bytes, which alias the input.
func (r *beReader) buffer() []byte {
	n := r.int32()
	if r.err != nil || n == -1 {
		return nil
	}
	if n < -1 {
		r.err = fmt.Errorf("length %d", n)
		return nil
	}
	return r.take(int(n))
}
