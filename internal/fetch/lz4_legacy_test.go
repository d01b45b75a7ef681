package fetch

import (
	"bytes"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// lz4Frame compresses data into an LZ4 frame, with the content size in the
// descriptor if size.
func lz4Frame(t *testing.T, data []byte, size bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if size {
		if err := w.Apply(lz4.SizeOption(uint64(len(data)))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestLZ4HeaderChecksum: the checksum computed matches the lz4 library's
// own frames, with and without the content size in the descriptor.
func TestLZ4HeaderChecksum(t *testing.T) {
	data := bytes.Repeat([]byte("kafka v0 lz4 "), 100)
	for _, size := range []bool{false, true} {
		frame := lz4Frame(t, data, size)
		if got := withLZ4HeaderChecksum(frame); &got[0] != &frame[0] {
			t.Fatalf("size=%v: a valid frame was copied: checksum %#x, computed %#x", size, frame[6], byte(xxh32Short(frame[4:6])>>8))
		}
	}
}

// TestLZ4FrameOfFormatV0: a v0 message's lz4 frame with Kafka's header
// checksum (KAFKA-3160) decompresses; in format v1 the same frame is still
// rejected, and the response buffer is not written to.
func TestLZ4FrameOfFormatV0(t *testing.T) {
	data := bytes.Repeat([]byte("kafka v0 lz4 "), 100)
	for _, size := range []bool{false, true} {
		frame := lz4Frame(t, data, size)
		hc := 6
		if size {
			hc += 8
		}
		frame[hc] ^= 0x5a // not the checksum the format defines
		orig := bytes.Clone(frame)

		if _, err := decompress(codecLZ4, frame, 1<<20); err == nil {
			t.Fatalf("size=%v: the lz4 decoder accepted a wrong header checksum; the test frame is not what Kafka writes", size)
		}
		if _, err := decompressMessage(1, codecLZ4, frame, 1<<20); err == nil {
			t.Fatalf("size=%v: format v1 accepted a wrong header checksum", size)
		}
		got, err := decompressMessage(0, codecLZ4, frame, 1<<20)
		if err != nil {
			t.Fatalf("size=%v: format v0: %v", size, err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("size=%v: format v0 decompressed to %d bytes, want %d", size, len(got), len(data))
		}
		if !bytes.Equal(frame, orig) {
			t.Fatalf("size=%v: the frame was modified in place", size)
		}
	}
	// What is not an LZ4 frame is left alone.
	for _, b := range [][]byte{nil, {1, 2, 3}, bytes.Repeat([]byte{0}, 20)} {
		if got := withLZ4HeaderChecksum(b); !bytes.Equal(got, b) {
			t.Fatalf("%v changed to %v", b, got)
		}
	}
}
