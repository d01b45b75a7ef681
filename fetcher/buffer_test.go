package fetcher

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewResponseBuffer(t *testing.T) {
	require.Nil(t, newResponseBuffer(0))
	for _, n := range []int{1, 7, 4096, 1 << 20, 3<<20 + 5} {
		a, b := newResponseBuffer(n), newResponseBuffer(n)
		require.Len(t, a, n)
		require.GreaterOrEqual(t, cap(a), n)
		for i := range a {
			a[i] = byte(i)
		}
		for i := range b {
			b[i] = 0xff
		}
		runtime.GC() // the buffers stay alive and distinct through a collection
		for i := range a {
			if a[i] != byte(i) {
				t.Fatalf("n=%d: byte %d changed to %d", n, i, a[i])
			}
		}
		require.Equal(t, bytes.Repeat([]byte{0xff}, n), b)
	}
}

// BenchmarkResponseBuffer compares make's cleared allocation with
// newResponseBuffer for a 4 MiB response, each filled once as a read
// would fill it.
func BenchmarkResponseBuffer(b *testing.B) {
	const n = 4 << 20
	src := bytes.Repeat([]byte{1}, n)
	b.Run("make", func(b *testing.B) {
		b.SetBytes(n)
		for b.Loop() {
			copy(make([]byte, n), src)
		}
	})
	b.Run("newResponseBuffer", func(b *testing.B) {
		b.SetBytes(n)
		for b.Loop() {
			copy(newResponseBuffer(n), src)
		}
	})
}
