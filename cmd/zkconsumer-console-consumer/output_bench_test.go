package main

import (
	"io"
	"testing"

	"github.com/zkconsumer/zkconsumer/connector"
)

// BenchmarkOutput is the console consumer's own cost per message of 100
// bytes: formatting into the buffer, tracking the offset, writing out.
func BenchmarkOutput(b *testing.B) {
	f, err := newFormatter(map[string]string{})
	if err != nil {
		b.Fatal(err)
	}
	out := newOutput(io.Discard, true)
	defer out.close()
	m := &connector.Message{Topic: "bench", Partition: 0, Value: make([]byte, 100)}
	b.SetBytes(101)
	b.ReportAllocs()
	for i := range b.N {
		m.Offset = int64(i)
		if _, err := out.add(m, f, false); err != nil {
			b.Fatal(err)
		}
	}
}
