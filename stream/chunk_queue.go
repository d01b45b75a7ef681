package stream

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ChunkQueue is the bounded FIFO of chunks between the fetchers and one
// stream (Kafka's per-stream BlockingQueue[FetchedDataChunk]). Its capacity
// is queued.max.message.chunks: a full queue blocks Put, which is what
// applies backpressure to the fetchers.
//
// All methods are safe for concurrent use. A closed queue stays closed:
// Put and Take fail with ErrClosed and queued chunks are dropped.
type ChunkQueue struct {
	ch        chan *FetchedDataChunk
	closed    chan struct{}
	isClosed  atomic.Bool
	closeOnce sync.Once
}

// NewChunkQueue returns an empty queue holding at most capacity chunks.
// capacity corresponds to Kafka's queued.max.message.chunks (default 2) and
// must be at least 1.
func NewChunkQueue(capacity int) (*ChunkQueue, error) {
	if capacity < 1 {
		return nil, fmt.Errorf("stream: queue capacity must be at least 1, got %d", capacity)
	}
	return &ChunkQueue{
		ch:     make(chan *FetchedDataChunk, capacity),
		closed: make(chan struct{}),
	}, nil
}

// Put appends chunk to the queue, blocking while the queue is full. It
// returns ErrClosed if the queue is or becomes closed, and ctx.Err() if ctx
// ends first; in both cases the chunk was not queued.
//
// Fetchers normally call PartitionTopicInfo.Enqueue instead, which also
// gives up when the partition is revoked.
func (q *ChunkQueue) Put(ctx context.Context, chunk *FetchedDataChunk) error {
	return q.put(ctx, chunk, nil)
}

// put is Put that also gives up, with ErrClosed, when abort is closed.
func (q *ChunkQueue) put(ctx context.Context, chunk *FetchedDataChunk, abort <-chan struct{}) error {
	if q.isClosed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case q.ch <- chunk:
		return nil
	default:
	}
	select {
	case q.ch <- chunk:
		return nil
	case <-q.closed:
		return ErrClosed
	case <-abort:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Take removes and returns the oldest chunk, blocking while the queue is
// empty. It returns ErrClosed once the queue is closed, even if chunks were
// queued, and ctx.Err() if ctx ends first.
func (q *ChunkQueue) Take(ctx context.Context) (*FetchedDataChunk, error) {
	return q.take(ctx, nil)
}

// take is Take that gives up with ErrConsumerTimeout when timeout fires.
func (q *ChunkQueue) take(ctx context.Context, timeout <-chan time.Time) (*FetchedDataChunk, error) {
	if q.isClosed.Load() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case c := <-q.ch:
		return c, nil
	default:
	}
	select {
	case c := <-q.ch:
		return c, nil
	case <-q.closed:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timeout:
		return nil, ErrConsumerTimeout
	}
}

// tryTake is a Take that never blocks: ok is false when the queue is empty.
func (q *ChunkQueue) tryTake() (c *FetchedDataChunk, ok bool, err error) {
	if q.isClosed.Load() {
		return nil, false, ErrClosed
	}
	select {
	case c = <-q.ch:
		return c, true, nil
	default:
		return nil, false, nil
	}
}

// Clear drops the chunks queued when it is called. Putters blocked on a full
// queue are released and queue their chunks into the freed room; Kafka's
// rebalance clears the queues after stopping the fetchers, and revoking the
// old partitions keeps anything that slips in from being handed out.
func (q *ChunkQueue) Clear() {
	for n := len(q.ch); n > 0; n-- {
		select {
		case <-q.ch:
		default:
			return
		}
	}
}

// Len reports the number of queued chunks (Kafka's FetchQueueSize gauge).
func (q *ChunkQueue) Len() int { return len(q.ch) }

// Cap reports the queue's capacity.
func (q *ChunkQueue) Cap() int { return cap(q.ch) }

// Closed reports whether Close has been called.
func (q *ChunkQueue) Closed() bool { return q.isClosed.Load() }

// Close closes the queue and drops the chunks in it. Blocked Put and Take
// calls return ErrClosed, as do all later ones. Close is idempotent.
func (q *ChunkQueue) Close() {
	q.closeOnce.Do(func() {
		q.isClosed.Store(true)
		close(q.closed)
	})
	q.Clear()
}
