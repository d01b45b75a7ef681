package streamcore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ChunkQueue is the bounded FIFO of chunks between the fetchers and one
// stream (Kafka's per-stream BlockingQueue[FetchedDataChunk]). Its capacity
// is queued.max.message.chunks: a full queue blocks
// PartitionTopicInfo.Enqueue, which is what applies backpressure to the
// fetchers.
//
// Only the partitions feeding the stream put chunks on it
// (PartitionTopicInfo.Enqueue) and only the stream's iterator takes them
// off; outside the package it is a handle to pass to
// NewPartitionTopicInfo and a length to watch. All methods are safe for
// concurrent use. A closed queue stays closed: puts and takes fail with
// ErrClosed and queued chunks are dropped.
type ChunkQueue struct {
	ch        chan *FetchedDataChunk
	closed    chan struct{}
	isClosed  atomic.Bool
	closeOnce sync.Once
	// wake (capacity 1) interrupts a take waiting for a chunk: a
	// partition of the stream was resumed, and the iterator may have
	// set an error chunk of it aside.
	wake chan struct{}
}

// newChunkQueue returns an empty queue holding at most capacity chunks.
// capacity corresponds to Kafka's queued.max.message.chunks (default 2) and
// must be at least 1.
func newChunkQueue(capacity int) (*ChunkQueue, error) {
	if capacity < 1 {
		return nil, fmt.Errorf("queue capacity must be at least 1, got %d", capacity)
	}
	return &ChunkQueue{
		ch:     make(chan *FetchedDataChunk, capacity),
		closed: make(chan struct{}),
		wake:   make(chan struct{}, 1),
	}, nil
}

// put appends chunk to the queue, blocking while the queue is full. It
// returns ErrClosed if the queue is or becomes closed or revoked is
// closed, ErrPaused if halted is closed first, and ctx.Err() if ctx ends
// first; in those cases the chunk was not queued. Nil channels never fire.
func (q *ChunkQueue) put(ctx context.Context, chunk *FetchedDataChunk, revoked, halted <-chan struct{}) error {
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
	case <-revoked:
		return ErrClosed
	case <-halted:
		return ErrPaused
	case <-ctx.Done():
		return ctx.Err()
	}
}

// take removes and returns the oldest chunk, blocking while the queue is
// empty. It returns ErrClosed once the queue is closed, even if chunks were
// queued, ctx.Err() if ctx ends first, ErrConsumerTimeout when timeout
// fires, and (nil, nil) when woken by signal.
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
	case <-q.wake:
		return nil, nil
	}
}

// tryTake is a take that never blocks: ok is false when the queue is empty.
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

// signal wakes a take that is waiting, or the next one.
func (q *ChunkQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// clear drops the chunks queued when it is called, releasing them (see
// FetchedDataChunk.done). Putters blocked on a full
// queue are released and queue their chunks into the freed room; Kafka's
// rebalance clears the queues after stopping the fetchers, and revoking the
// old partitions keeps anything that slips in from being handed out.
func (q *ChunkQueue) clear() {
	for n := len(q.ch); n > 0; n-- {
		select {
		case c := <-q.ch:
			if c != nil {
				c.done()
			}
		default:
			return
		}
	}
}

// Len reports the number of queued chunks (Kafka's FetchQueueSize gauge).
func (q *ChunkQueue) Len() int { return len(q.ch) }

// Cap reports the queue's capacity.
func (q *ChunkQueue) Cap() int { return cap(q.ch) }

// Closed reports whether the queue has been closed (its stream shut down).
func (q *ChunkQueue) Closed() bool { return q.isClosed.Load() }

// close closes the queue and drops the chunks in it. Blocked puts and takes
// return ErrClosed, as do all later ones. close is idempotent.
func (q *ChunkQueue) close() {
	q.closeOnce.Do(func() {
		q.isClosed.Store(true)
		close(q.closed)
	})
	q.clear()
}
