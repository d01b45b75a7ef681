package streamcore

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
)

// PartitionTopicInfo is one partition assigned to this consumer in one
// rebalance generation (Kafka's PartitionTopicInfo). It records where the
// fetcher is (the fetched offset: the next offset to fetch) and where the
// application is (the consumed offset: the offset to commit, one past the
// last message the application has finished with), and it owns the link to
// the queue of the stream that consumes the partition.
//
// A new generation makes new PartitionTopicInfos; the connector revokes the
// old ones, which fences them: nothing of a revoked partition reaches the
// application again. All methods are safe for concurrent use.
type PartitionTopicInfo struct {
	// Topic is the partition's topic.
	Topic string
	// Partition is the partition id.
	Partition int32
	// FetchSize is the most bytes to fetch per request for this partition
	// (Kafka's fetch.message.max.bytes, default 1048576).
	FetchSize int32

	queue          *ChunkQueue
	fence          Fence     // nil: always held
	counters       *Counters // nil: nothing counted
	consumedOffset atomic.Int64
	fetchedOffset  atomic.Int64
	highWatermark  atomic.Int64 // plus one, so that the zero value means unknown

	revoked    atomic.Bool
	revokedCh  chan struct{}
	revokeOnce sync.Once

	// paused is set by Pause and cleared by Resume; halt is closed while
	// paused (a new one is made by Resume), to release an Enqueue blocked
	// on a full queue. Both change under pauseMu.
	paused  atomic.Bool
	pauseMu sync.Mutex
	halt    chan struct{}
}

// NewPartitionTopicInfo returns the state of one assigned partition whose
// chunks go to q. consumedOffset is the offset to start consuming from
// (usually the committed offset) and fetchedOffset the offset to fetch next;
// q must not be nil.
func NewPartitionTopicInfo(topic string, partition int32, q *ChunkQueue, consumedOffset, fetchedOffset int64, fetchSize int32) *PartitionTopicInfo {
	p := &PartitionTopicInfo{
		Topic:     topic,
		Partition: partition,
		FetchSize: fetchSize,
		queue:     q,
		revokedCh: make(chan struct{}),
		halt:      make(chan struct{}),
	}
	p.consumedOffset.Store(consumedOffset)
	p.fetchedOffset.Store(fetchedOffset)
	return p
}

// Queue returns the queue the partition's chunks are put on.
func (p *PartitionTopicInfo) Queue() *ChunkQueue { return p.queue }

// ConsumedOffset returns the offset to commit: one past the last message the
// application has finished with, or where consumption starts.
func (p *PartitionTopicInfo) ConsumedOffset() int64 { return p.consumedOffset.Load() }

// FetchedOffset returns the offset the next fetch starts at.
func (p *PartitionTopicInfo) FetchedOffset() int64 { return p.fetchedOffset.Load() }

// ResetConsumeOffset sets the consumed offset, forward or backward. Fetchers
// call it together with ResetFetchOffset after resolving an out-of-range
// offset (auto.offset.reset).
func (p *PartitionTopicInfo) ResetConsumeOffset(offset int64) { p.consumedOffset.Store(offset) }

// ResetFetchOffset sets the offset the next fetch starts at.
func (p *PartitionTopicInfo) ResetFetchOffset(offset int64) { p.fetchedOffset.Store(offset) }

// advanceConsumed raises the consumed offset to offset unless the partition
// is revoked or the offset is already there or beyond. Marking is
// advance-only so that a late or repeated mark never moves a commit back.
func (p *PartitionTopicInfo) advanceConsumed(offset int64) {
	if p.revoked.Load() {
		return
	}
	for {
		cur := p.consumedOffset.Load()
		if cur >= offset || p.consumedOffset.CompareAndSwap(cur, offset) {
			return
		}
	}
}

// Enqueue puts the messages of one fetch on the stream's queue as a
// FetchedDataChunk, blocking while the queue is full, then advances the
// fetched offset to nextFetchOffset. The chunk's FetchOffset is the fetched
// offset before the call and its NextOffset is nextFetchOffset. msgs must
// be this partition's messages in offset order; Enqueue takes ownership of
// them.
//
// An empty msgs (a fetch whose records were all filtered out) still moves
// the partition on. If the application has consumed everything fetched
// before, the consumed offset moves to nextFetchOffset at once; otherwise
// a chunk without messages is queued, which moves it there when the
// iterator reaches it.
//
// Enqueue returns ErrClosed, without queueing, if the queue is closed or the
// partition is revoked (also while blocked), ErrPaused if the partition is
// paused (also while blocked), and ctx.Err() if ctx ends first. The fetched
// offset then stays put.
func (p *PartitionTopicInfo) Enqueue(ctx context.Context, msgs []*Message, nextFetchOffset int64) error {
	return p.EnqueueRecycled(ctx, msgs, nextFetchOffset, nil)
}

// EnqueueRecycled is Enqueue for messages whose memory the caller
// recycles: release, if not nil, is called once the stream can no longer
// hand out or use a message of msgs, so that their memory can be reused.
// That is when the iterator moves past the chunk (in the call to Next that
// follows the one that returned its last message, which by the recycling
// contract ends that message's validity), or when the chunk is dropped:
// its partition revoked, the stream cleared or shut down (a chunk being
// read is dropped in the next call to Next; chunks set aside for a paused
// partition when they are dropped too), or at once when the chunk is not
// queued (msgs empty, or an error is returned). release is called at most
// once, from whichever goroutine drops the chunk; a chunk that is never
// dropped (say a stream nobody reads any more) is left to the garbage
// collector and release is not called. Before release is called the
// messages are cut off from the stream: their partition is cleared and
// their Offset set to -1, so that one kept past its validity marks
// nothing (see Message).
func (p *PartitionTopicInfo) EnqueueRecycled(ctx context.Context, msgs []*Message, nextFetchOffset int64, release func()) error {
	if len(msgs) == 0 && release != nil {
		release()
		release = nil
	}
	if p.revoked.Load() {
		if release != nil {
			release()
		}
		return ErrClosed
	}
	if p.paused.Load() {
		if release != nil {
			release()
		}
		return ErrPaused
	}
	halt := p.haltCh()
	if len(msgs) > 0 {
		var size int
		for _, m := range msgs {
			if m != nil {
				size += len(m.Key) + len(m.Value)
			}
		}
		chunk := &FetchedDataChunk{Messages: msgs, TopicInfo: p, FetchOffset: p.fetchedOffset.Load(), NextOffset: nextFetchOffset, release: release}
		if err := p.queue.put(ctx, chunk, p.revokedCh, halt); err != nil {
			chunk.done()
			return err
		}
		if c := p.counters; c != nil {
			c.bytes.Add(int64(size))
		}
	} else if from := p.fetchedOffset.Load(); nextFetchOffset > from && !p.skipFiltered(from, nextFetchOffset) {
		chunk := &FetchedDataChunk{TopicInfo: p, FetchOffset: from, NextOffset: nextFetchOffset}
		if err := p.queue.put(ctx, chunk, p.revokedCh, halt); err != nil {
			return err
		}
	}
	p.fetchedOffset.Store(nextFetchOffset)
	return nil
}

// skipFiltered moves the consumed offset from at least from to to, over
// records that hold no message to consume. It reports false, leaving the
// offset alone, when the consumed offset is below from: a message before
// the filtered records has not been consumed yet.
func (p *PartitionTopicInfo) skipFiltered(from, to int64) bool {
	for {
		cur := p.consumedOffset.Load()
		switch {
		case p.revoked.Load() || cur >= to:
			return true
		case cur < from:
			return false
		case p.consumedOffset.CompareAndSwap(cur, to):
			return true
		}
	}
}

// EnqueueError puts an error chunk on the stream's queue, blocking while the
// queue is full, so that err is delivered, as a *PartitionError, by the
// stream that owns the partition: for example a message larger than the
// fetch size (ErrMessageTooLarge) or an out-of-range offset with no reset
// policy. The fetched offset does not move. It fails like Enqueue.
func (p *PartitionTopicInfo) EnqueueError(ctx context.Context, err error) error {
	if p.revoked.Load() {
		return ErrClosed
	}
	if p.paused.Load() {
		return ErrPaused
	}
	chunk := &FetchedDataChunk{TopicInfo: p, FetchOffset: p.fetchedOffset.Load(), Err: err}
	return p.queue.put(ctx, chunk, p.revokedCh, p.haltCh())
}

// Revoke fences the partition at the end of its generation. Once Revoke has
// returned, no iterator hands out another message of it: queued chunks are
// skipped when they reach the head of the queue, an iterator in the middle
// of one of its chunks stops before the next message, and a message handed
// out earlier no longer moves the consumed offset when it is marked
// consumed. Enqueue and EnqueueError fail with ErrClosed, including calls
// blocked on a full queue. Revoke is idempotent.
func (p *PartitionTopicInfo) Revoke() {
	p.revokeOnce.Do(func() {
		p.revoked.Store(true)
		close(p.revokedCh)
	})
}

// Revoked reports whether Revoke has been called.
func (p *PartitionTopicInfo) Revoked() bool { return p.revoked.Load() }

// Pause stops the partition's flow without giving the partition up, for
// backpressure. Enqueue and EnqueueError refuse with ErrPaused, and one
// blocked on a full queue gives up at once, so the fetcher stops fetching
// the partition and the other partitions of its fetcher and its stream
// keep flowing. The stream's iterator sets the partition's queued chunks
// aside, and the rest of a chunk it is in the middle of, instead of
// handing their messages out. Nothing is lost: the fetched offset stays
// where the last queued chunk left it, and after Resume the set-aside
// chunks come out first, in order, then fetching continues from there.
// A message handed out before the pause can still be marked consumed.
// Pause is idempotent.
func (p *PartitionTopicInfo) Pause() {
	p.pauseMu.Lock()
	defer p.pauseMu.Unlock()
	if p.paused.Load() {
		return
	}
	p.paused.Store(true)
	close(p.halt)
}

// Resume undoes Pause: the fetcher may fetch the partition again and the
// iterator hands out the chunks it set aside, then the newly fetched ones.
// A fetcher whose partitions were all paused picks it up within its
// backoff (refresh.leader.backoff.ms). Resume is idempotent.
func (p *PartitionTopicInfo) Resume() {
	p.pauseMu.Lock()
	if !p.paused.Load() {
		p.pauseMu.Unlock()
		return
	}
	p.halt = make(chan struct{})
	p.paused.Store(false)
	p.pauseMu.Unlock()
	p.queue.signal()
}

// Paused reports whether the partition is paused.
func (p *PartitionTopicInfo) Paused() bool { return p.paused.Load() }

// haltCh returns a channel that is closed while the partition is paused.
func (p *PartitionTopicInfo) haltCh() <-chan struct{} {
	p.pauseMu.Lock()
	defer p.pauseMu.Unlock()
	return p.halt
}

// String describes the partition and its offsets, for logs.
func (p *PartitionTopicInfo) String() string {
	return p.Topic + "-" + strconv.FormatInt(int64(p.Partition), 10) +
		": fetched offset " + strconv.FormatInt(p.FetchedOffset(), 10) +
		", consumed offset " + strconv.FormatInt(p.ConsumedOffset(), 10)
}
