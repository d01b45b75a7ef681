package streamcore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

func TestChunkQueueRejectsZeroCapacity(t *testing.T) {
	for _, c := range []int{0, -1} {
		q, err := newChunkQueue(c)
		assert.Nil(t, q)
		assert.ErrorContains(t, err, "queue capacity")
	}
	_, _, err := NewKafkaStream(0, -1)
	assert.Error(t, err)
}

func TestChunkQueueFIFO(t *testing.T) {
	q := newTestQueue(t, 3)
	ctx := context.Background()
	chunks := []*FetchedDataChunk{{FetchOffset: 1}, {FetchOffset: 2}, {FetchOffset: 3}}
	for _, c := range chunks {
		require.NoError(t, q.put(ctx, c, nil, nil))
	}
	assert.Equal(t, 3, q.Len())
	assert.Equal(t, 3, q.Cap())
	for _, want := range chunks {
		got, err := q.take(ctx, nil)
		require.NoError(t, err)
		assert.Same(t, want, got)
	}
	assert.Equal(t, 0, q.Len())
}

func TestChunkQueuePutBlocksWhenFull(t *testing.T) {
	q := newTestQueue(t, 1)
	ctx := context.Background()
	first, second := &FetchedDataChunk{FetchOffset: 1}, &FetchedDataChunk{FetchOffset: 2}
	require.NoError(t, q.put(ctx, first, nil, nil))

	assert.ErrorIs(t, q.put(shortCtx(t), second, nil, nil), context.DeadlineExceeded)
	assert.Equal(t, 1, q.Len())

	put := async(func() result { return result{err: q.put(ctx, second, nil, nil)} })
	got, err := q.take(ctx, nil)
	require.NoError(t, err)
	assert.Same(t, first, got)
	require.NoError(t, await(t, put).err)
	got, err = q.take(ctx, nil)
	require.NoError(t, err)
	assert.Same(t, second, got)
}

func TestChunkQueueTakeBlocksWhenEmpty(t *testing.T) {
	q := newTestQueue(t, 1)
	_, err := q.take(shortCtx(t), nil)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	take := async(func() result {
		c, err := q.take(context.Background(), nil)
		return result{chunk: c, err: err}
	})
	want := &FetchedDataChunk{}
	require.NoError(t, q.put(context.Background(), want, nil, nil))
	r := await(t, take)
	require.NoError(t, r.err)
	assert.Same(t, want, r.chunk)
}

func TestChunkQueueContextCancel(t *testing.T) {
	q := newTestQueue(t, 1)
	require.NoError(t, q.put(context.Background(), &FetchedDataChunk{}, nil, nil))

	ctx, cancel := context.WithCancel(context.Background())
	put := async(func() result { return result{err: q.put(ctx, &FetchedDataChunk{}, nil, nil)} })
	cancel()
	assert.ErrorIs(t, await(t, put).err, context.Canceled)
	assert.Equal(t, 1, q.Len())

	// A cancelled context fails even when the call would not block.
	_, err := q.take(ctx, nil)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, q.Len())

	_, err = q.take(context.Background(), nil)
	require.NoError(t, err)
	assert.ErrorIs(t, q.put(ctx, &FetchedDataChunk{}, nil, nil), context.Canceled)
	assert.Equal(t, 0, q.Len())

	ctx, cancel = context.WithCancel(context.Background())
	take := async(func() result {
		c, err := q.take(ctx, nil)
		return result{chunk: c, err: err}
	})
	cancel()
	assert.ErrorIs(t, await(t, take).err, context.Canceled)
}

func TestChunkQueueClearWakesPutters(t *testing.T) {
	q := newTestQueue(t, 2)
	ctx := context.Background()
	require.NoError(t, q.put(ctx, &FetchedDataChunk{FetchOffset: 1}, nil, nil))
	require.NoError(t, q.put(ctx, &FetchedDataChunk{FetchOffset: 2}, nil, nil))

	late := &FetchedDataChunk{FetchOffset: 3}
	put := async(func() result { return result{err: q.put(ctx, late, nil, nil)} })
	q.clear()
	require.NoError(t, await(t, put).err)

	// Whether the putter got in before or after Clear, only its chunk is
	// left: Clear dropped both of the older ones.
	testwait.WaitFor(t, time.Second, func() bool { return q.Len() == 1 }, "the condition")
	got, err := q.take(ctx, nil)
	require.NoError(t, err)
	assert.Same(t, late, got)
}

func TestChunkQueueCloseWakesEveryone(t *testing.T) {
	full := newTestQueue(t, 1)
	empty := newTestQueue(t, 1)
	ctx := context.Background()
	require.NoError(t, full.put(ctx, &FetchedDataChunk{}, nil, nil))

	put := async(func() result { return result{err: full.put(ctx, &FetchedDataChunk{}, nil, nil)} })
	take := async(func() result {
		c, err := empty.take(ctx, nil)
		return result{chunk: c, err: err}
	})
	full.close()
	empty.close()
	assert.ErrorIs(t, await(t, put).err, ErrClosed)
	assert.ErrorIs(t, await(t, take).err, ErrClosed)

	// Queued chunks are dropped; later calls fail at once.
	assert.True(t, full.Closed())
	assert.Equal(t, 0, full.Len())
	_, err := full.take(ctx, nil)
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, full.put(ctx, &FetchedDataChunk{}, nil, nil), ErrClosed)
	full.close() // idempotent
}

func TestChunkQueueTakeAfterCloseDropsQueued(t *testing.T) {
	q := newTestQueue(t, 2)
	require.NoError(t, q.put(context.Background(), &FetchedDataChunk{}, nil, nil))
	q.close()
	_, err := q.take(context.Background(), nil)
	assert.ErrorIs(t, err, ErrClosed)
}

func TestChunkQueueConcurrent(t *testing.T) {
	const producers, consumers, perProducer = 4, 3, 500
	q := newTestQueue(t, 2)
	ctx := context.Background()

	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range perProducer {
				c := &FetchedDataChunk{FetchOffset: int64(p*perProducer + i)}
				if !assert.NoError(t, q.put(ctx, c, nil, nil)) {
					return
				}
			}
		})
	}

	var (
		mu   sync.Mutex
		seen = make(map[int64]bool)
		last = make(map[int]int64) // per consumer and producer: FIFO
	)
	var cwg sync.WaitGroup
	for c := range consumers {
		cwg.Go(func() {
			for {
				chunk, err := q.take(ctx, nil)
				if err != nil {
					assert.ErrorIs(t, err, ErrClosed)
					return
				}
				p := int(chunk.FetchOffset) / perProducer
				mu.Lock()
				assert.False(t, seen[chunk.FetchOffset], "chunk %d taken twice", chunk.FetchOffset)
				seen[chunk.FetchOffset] = true
				key := c*producers + p
				if prev, ok := last[key]; ok {
					assert.Greater(t, chunk.FetchOffset, prev, "out of order")
				}
				last[key] = chunk.FetchOffset
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	testwait.WaitFor(t, 5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == producers*perProducer
	}, "the condition")
	q.close()
	cwg.Wait()
}
