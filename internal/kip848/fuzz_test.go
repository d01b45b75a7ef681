package kip848

import "testing"

// FuzzDecoders feeds arbitrary bytes to every decoder of network data:
// an error or a value, never a panic.
func FuzzDecoders(f *testing.F) {
	for _, d := range decoders() {
		f.Add(d.valid)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range decoders() {
			_ = d.decode(b)
		}
	})
}
