package fetcher

import (
	"strings"
	"unsafe"
)

// newResponseBuffer returns a byte slice of length n for a fetch response
// to be read into, without the zeroing make does.
//
// A response is read into a new buffer each time (its messages alias it,
// so it cannot be reused while an application may hold one of them), and
// make([]byte, n) clears every byte before the read overwrites it: on
// 10 KiB messages that clearing was a fifth of the consumer's CPU
// (BENCHMARKS.md §8). strings.Builder.Grow allocates without clearing,
// since it only ever exposes what was written; this takes that allocation
// as a []byte. It is ordinary pointer-free heap memory, owned by the
// slice alone (the one-byte string used to reach it is dropped), and the
// garbage collector treats it as it treats make's.
//
// The contents are whatever the memory held before: the caller must
// overwrite all n bytes (io.ReadFull) before reading any, and drop the
// buffer on a short read.
func newResponseBuffer(n int) []byte {
	if n <= 0 {
		return nil
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte(0)
	s := b.String()
	return unsafe.Slice(unsafe.StringData(s), n)
}
