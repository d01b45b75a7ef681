//go:build cgo && zkconsumer_libzstd

package fetch

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/IBM/sarama"
)

// TestLibzstd: built with the zkconsumer_libzstd tag, zstd batches are
// decoded by libzstd, to what the Go decoder gives, and a corrupt frame is
// an error, not a panic or a short output.
func TestLibzstd(t *testing.T) {
	if libzstd == nil {
		t.Fatal("the zkconsumer_libzstd build does not use libzstd")
	}
	recs := rawRecords(seq(500), func(i int) []byte { return fmt.Appendf(nil, "value-%d-%s", i, bytes.Repeat([]byte{'x'}, i)) })
	frame := compress(sarama.CompressionZSTD, recs)
	out, ok, err := libzstd(frame, make([]byte, 0, len(recs)))
	if !ok || err != nil || !bytes.Equal(out, recs) {
		t.Fatalf("libzstd: ok %v, %v, %d bytes of %d", ok, err, len(out), len(recs))
	}
	if _, ok, err := libzstd(frame, make([]byte, 0, len(recs)-1)); !ok || err == nil {
		t.Errorf("into a buffer too small: ok %v, %v", ok, err)
	}
	bad := bytes.Clone(frame)
	bad[len(bad)/2] ^= 0xff
	if _, ok, err := libzstd(bad, make([]byte, 0, len(recs))); !ok || err == nil {
		t.Errorf("a corrupt frame: ok %v, %v", ok, err)
	}
	d := decodeBlock("t", 0, 0, 1<<20, false, &respBlock{records: rawBatch(0, codecZstd, 499, 500, frame), hwm: 500})
	if d.corrupt != nil || len(d.msgs) != 500 || string(d.msgs[499].Value[:10]) != "value-499-" {
		t.Fatalf("decoded %d messages, %v", len(d.msgs), d.corrupt)
	}
}
