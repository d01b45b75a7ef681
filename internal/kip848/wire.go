package kip848

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrMalformed is wrapped by the errors of decoders given bytes that are
// not a valid encoding: truncated, with a negative or oversized length, or
// with bytes left over.
var ErrMalformed = errors.New("malformed protocol message")

// encoder appends Kafka's primitive types to a byte slice.
type encoder struct{ b []byte }

func (e *encoder) int8(v int8)   { e.b = append(e.b, byte(v)) }
func (e *encoder) int16(v int16) { e.b = binary.BigEndian.AppendUint16(e.b, uint16(v)) }
func (e *encoder) int32(v int32) { e.b = binary.BigEndian.AppendUint32(e.b, uint32(v)) }
func (e *encoder) int64(v int64) { e.b = binary.BigEndian.AppendUint64(e.b, uint64(v)) }
func (e *encoder) uvarint(v uint64) {
	e.b = binary.AppendUvarint(e.b, v)
}
func (e *encoder) uuid(u UUID) { e.b = append(e.b, u[:]...) }

// string is a non-compact (int16 length) string, as in request headers.
func (e *encoder) string(s string) {
	e.int16(int16(len(s)))
	e.b = append(e.b, s...)
}

// compactString is a flexible version's string: length+1 as a uvarint.
func (e *encoder) compactString(s string) {
	e.uvarint(uint64(len(s)) + 1)
	e.b = append(e.b, s...)
}

// compactNullableString writes nil as the null string (length 0).
func (e *encoder) compactNullableString(s *string) {
	if s == nil {
		e.uvarint(0)
		return
	}
	e.compactString(*s)
}

// compactBytes is a flexible version's byte string: length+1 as a
// uvarint.
func (e *encoder) compactBytes(b []byte) {
	e.uvarint(uint64(len(b)) + 1)
	e.b = append(e.b, b...)
}

// bool writes a boolean as one byte, 0 or 1.
func (e *encoder) bool(v bool) {
	if v {
		e.int8(1)
		return
	}
	e.int8(0)
}

// compactArrayLen writes an array's length (n < 0: null).
func (e *encoder) compactArrayLen(n int) {
	if n < 0 {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(n) + 1)
}

// emptyTags writes an empty tagged-field section.
func (e *encoder) emptyTags() { e.uvarint(0) }

// decoder reads Kafka's primitive types from a byte slice; the first error
// sticks and every later read returns zero values.
type decoder struct {
	b   []byte
	off int
	err error
	// what names the message being decoded, for errors.
	what string
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s at byte %d: %s", ErrMalformed, d.what, d.off, fmt.Sprintf(format, args...))
	}
}

func (d *decoder) remaining() int { return len(d.b) - d.off }

func (d *decoder) take(n int, field string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > d.remaining() {
		d.fail("%s needs %d bytes, %d left", field, n, d.remaining())
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

func (d *decoder) int8(field string) int8 {
	if p := d.take(1, field); p != nil {
		return int8(p[0])
	}
	return 0
}

func (d *decoder) int16(field string) int16 {
	if p := d.take(2, field); p != nil {
		return int16(binary.BigEndian.Uint16(p))
	}
	return 0
}

func (d *decoder) int32(field string) int32 {
	if p := d.take(4, field); p != nil {
		return int32(binary.BigEndian.Uint32(p))
	}
	return 0
}

func (d *decoder) int64(field string) int64 {
	if p := d.take(8, field); p != nil {
		return int64(binary.BigEndian.Uint64(p))
	}
	return 0
}

func (d *decoder) uuid(field string) UUID {
	var u UUID
	if p := d.take(16, field); p != nil {
		copy(u[:], p)
	}
	return u
}

func (d *decoder) uvarint(field string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	switch {
	case n == 0:
		d.fail("%s: truncated varint", field)
		return 0
	case n < 0 || n > 5 || v > math.MaxUint32: // Kafka's unsigned varints are 32-bit
		d.fail("%s: varint overflows", field)
		return 0
	}
	d.off += n
	return v
}

// compactLen reads a compact length (length+1; 0 is null) and checks
// that at least n*minSize bytes remain for its elements: it returns -1
// for null, and -1 with the error set when the length is impossible.
func (d *decoder) compactLen(field string, minSize int) int {
	v := d.uvarint(field)
	if d.err != nil || v == 0 {
		return -1
	}
	n := v - 1
	if n > uint64(d.remaining()) || n*uint64(minSize) > uint64(d.remaining()) {
		d.fail("%s claims %d elements, %d bytes left", field, n, d.remaining())
		return -1
	}
	return int(n)
}

func (d *decoder) compactNullableString(field string) *string {
	n := d.compactLen(field, 1)
	if n < 0 {
		return nil
	}
	s := string(d.take(n, field))
	return &s
}

func (d *decoder) compactString(field string) string {
	s := d.compactNullableString(field)
	if s == nil {
		d.fail("%s: null where a string is required", field)
		return ""
	}
	return *s
}

// compactBytes reads a non-nullable byte string, copied out of the
// message.
func (d *decoder) compactBytes(field string) []byte {
	n := d.compactLen(field, 1)
	if n < 0 {
		if d.err == nil {
			d.fail("%s: null where bytes are required", field)
		}
		return nil
	}
	return append([]byte{}, d.take(n, field)...)
}

// bool reads a boolean: one byte, 0 or 1.
func (d *decoder) bool(field string) bool {
	switch v := d.int8(field); v {
	case 0:
		return false
	case 1:
		return true
	default:
		d.fail("%s: boolean byte %d", field, v)
		return false
	}
}

// int16String reads a non-compact nullable string (int16 length).
func (d *decoder) int16String(field string) string {
	n := d.int16(field)
	if n < 0 {
		return ""
	}
	return string(d.take(int(n), field))
}

// skipTags skips a tagged-field section: fields this package does not know.
func (d *decoder) skipTags(field string) {
	n := d.uvarint(field + " tag count")
	if d.err != nil {
		return
	}
	if n > uint64(d.remaining()) {
		d.fail("%s: %d tagged fields, %d bytes left", field, n, d.remaining())
		return
	}
	for range n {
		d.uvarint(field + " tag")
		size := d.uvarint(field + " tag size")
		if d.err != nil {
			return
		}
		if size > uint64(d.remaining()) {
			d.fail("%s: tagged field of %d bytes, %d left", field, size, d.remaining())
			return
		}
		d.off += int(size)
	}
}

// end fails if bytes are left over, and returns the sticky error.
func (d *decoder) end() error {
	if d.err == nil && d.remaining() != 0 {
		d.fail("%d bytes left over", d.remaining())
	}
	return d.err
}
