package chaos

import (
	"errors"
	"io"
	"testing"
)

// TestBeReaderBigEndian: integers read most significant byte first,
// strings and buffers after their length, in the order written.
func TestBeReaderBigEndian(t *testing.T) {
	in := []byte{
		0x01, 0x02, // int16
		0xfe, 0xdc, 0xba, 0x98, // int32, negative
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // int64
		0x00, 0x07, // bool false, true
		0x00, 0x02, 'a', 'b', // str
		0xff, 0xff, // str, null
		0x04, 'x', 'y', 'z', // compactStr
		0x00,                        // compactStr, null
		0x00, 0x00, 0x00, 0x01, 'q', // buffer
		0xff, 0xff, 0xff, 0xff, // buffer, null
	}
	r := &beReader{b: in}
	if got := r.int16(); got != 0x0102 {
		t.Errorf("int16 = %#x, want 0x0102", got)
	}
	if got := r.int32(); got != -0x01234568 {
		t.Errorf("int32 = %#x, want %#x", got, -0x01234568)
	}
	if got := r.int64(); got != 0x0102030405060708 {
		t.Errorf("int64 = %#x, want 0x0102030405060708", got)
	}
	if f, tr := r.boolean(), r.boolean(); f || !tr {
		t.Errorf("booleans = %v %v, want false true", f, tr)
	}
	if got := r.str(); got != "ab" {
		t.Errorf("str = %q, want ab", got)
	}
	if got := r.str(); got != "" {
		t.Errorf("null str = %q", got)
	}
	if got := r.compactStr(); got != "xyz" {
		t.Errorf("compactStr = %q, want xyz", got)
	}
	if got := r.compactStr(); got != "" {
		t.Errorf("null compactStr = %q", got)
	}
	if got := r.buffer(); string(got) != "q" {
		t.Errorf("buffer = %q, want q", got)
	}
	if got := r.buffer(); got != nil {
		t.Errorf("null buffer = %q, want nil", got)
	}
	if r.err != nil || len(r.b) != 0 {
		t.Errorf("after every field: err %v, %d bytes left", r.err, len(r.b))
	}
}

// TestBeReaderStickyError: a read past the end sets io.ErrUnexpectedEOF,
// and every read after it returns the zero value and leaves the error and
// the remaining bytes as they were, even a read that would fit.
func TestBeReaderStickyError(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		read func(*beReader)
	}{
		{"int16", []byte{1}, func(r *beReader) { _ = r.int16() }},
		{"int32", []byte{1, 2, 3}, func(r *beReader) { _ = r.int32() }},
		{"int64", []byte{1, 2, 3, 4, 5, 6, 7}, func(r *beReader) { _ = r.int64() }},
		{"str body", []byte{0, 5, 'a', 'b'}, func(r *beReader) { _ = r.str() }},
		{"str negative length", []byte{0xff, 0xfe, 'a'}, func(r *beReader) { _ = r.str() }},
		{"compactStr length", []byte{0x80}, func(r *beReader) { _ = r.compactStr() }},
		{"compactStr body", []byte{4, 'a'}, func(r *beReader) { _ = r.compactStr() }},
		{"buffer body", []byte{0, 0, 0, 3, 'a'}, func(r *beReader) { _ = r.buffer() }},
	} {
		r := &beReader{b: c.in}
		c.read(r)
		if !errors.Is(r.err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: err %v, want io.ErrUnexpectedEOF", c.name, r.err)
			continue
		}
		r.b = []byte{0, 0, 0, 0, 0, 0, 0, 1, 1}
		if r.int64() != 0 || r.boolean() || r.take(1) != nil || r.str() != "" || r.compactStr() != "" || r.buffer() != nil {
			t.Errorf("%s: a read after the error returned a value", c.name)
		}
		if !errors.Is(r.err, io.ErrUnexpectedEOF) || len(r.b) != 9 {
			t.Errorf("%s: after more reads: err %v, %d bytes left, want the first error and 9", c.name, r.err, len(r.b))
		}
	}
	// A Jute buffer length below -1 is an error of its own, sticky too.
	r := &beReader{b: []byte{0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0}}
	if b := r.buffer(); b != nil || r.err == nil || errors.Is(r.err, io.ErrUnexpectedEOF) {
		t.Fatalf("buffer of length -2: %q, err %v", b, r.err)
	}
	first := r.err
	if r.int32() != 0 || r.err != first {
		t.Errorf("after a bad length: err %v, want %v", r.err, first)
	}
}
