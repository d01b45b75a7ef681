package fetch

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecycledLZ4PayloadsReuseTheirBuffers: with recycling, lz4 frames
// without a content size, as Kafka's producers write them, decompress
// into the buffer the previous one gave back. They were given a buffer
// of one byte's capacity to grow, and a free buffer was taken only if at
// most twice that: none ever was, so every payload grew a new buffer
// while the free list filled with buffers nothing took (a 1 KiB x 4 lz4
// topic read at 212 MB peak RSS with recycling, 54 MB without).
func TestRecycledLZ4PayloadsReuseTheirBuffers(t *testing.T) {
	const limit = 32 << 20
	p := &pools{}
	p.noteLimit(limit)
	data := bytes.Repeat([]byte("a kafka record of about a kilobyte, compressed with lz4 by its producer; "), 3000)
	frame := lz4Frame(t, data, false)

	out, first, err := decompressPooled(p, codecLZ4, frame, limit)
	require.NoError(t, err)
	require.Equal(t, data, out)
	require.NotNil(t, first)
	first.release()

	for range 20 {
		out, pb, err := decompressPooled(p, codecLZ4, frame, limit)
		require.NoError(t, err)
		require.Equal(t, data, out)
		require.Same(t, first, pb, "a payload of unknown size decompressed into a new buffer while one was free")
		pb.release()
	}
	require.Equal(t, int64(cap(first.b)), p.free, "the free list holds the one buffer in use")

	// AllocsPerRun counts every allocation in the process, and goroutines
	// an earlier test left winding down allocate too: beside a busy test
	// binary one run counted 3. Others can only add, so the least of a
	// few runs is the payload's own count.
	least := math.Inf(1)
	for range 5 {
		least = min(least, testing.AllocsPerRun(50, func() {
			_, pb, err := decompressPooled(p, codecLZ4, frame, limit)
			if err != nil {
				t.Fatal(err)
			}
			pb.release()
		}))
	}
	require.LessOrEqual(t, least, 2.0, "allocations per payload of unknown size")
}

// TestRecycledPayloadOfKnownSizeTakesAFittingBuffer: a payload that
// declares its size takes a free buffer of at least that size and at
// most twice it, never a smaller one to grow or a much larger one to
// charge its chunk for.
func TestRecycledPayloadOfKnownSizeTakesAFittingBuffer(t *testing.T) {
	const limit = 32 << 20
	p := &pools{}
	p.noteLimit(limit)
	small := bytes.Repeat([]byte("small "), 1000)
	large := bytes.Repeat([]byte("large "), 100_000)
	_, pbSmall, err := decompressPooled(p, codecLZ4, lz4Frame(t, small, true), limit)
	require.NoError(t, err)
	_, pbLarge, err := decompressPooled(p, codecLZ4, lz4Frame(t, large, true), limit)
	require.NoError(t, err)
	pbSmall.release()
	pbLarge.release()

	out, pb, err := decompressPooled(p, codecLZ4, lz4Frame(t, small, true), limit)
	require.NoError(t, err)
	require.Equal(t, small, out)
	require.Same(t, pbSmall, pb)
	pb.release()
	out, pb, err = decompressPooled(p, codecLZ4, lz4Frame(t, large, true), limit)
	require.NoError(t, err)
	require.Equal(t, large, out)
	require.Same(t, pbLarge, pb)
	pb.release()
}
