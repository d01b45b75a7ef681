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
	// on a full queue. epoch counts the times the stream dropped chunks of
	// the paused partition and moved its fetched offset back (see Pause);
	// every chunk carries the epoch it was queued in, and one of an
	// earlier epoch is dropped. stopped is epoch+1 while a fetcher is
	// stopped at an error it queued with EnqueueStop, else 0. All of them,
	// and the fetched offset together with the epoch, change under pauseMu.
	paused  atomic.Bool
	pauseMu sync.Mutex
	halt    chan struct{}
	epoch   atomic.Uint64
	stopped atomic.Uint64
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

// ResetFetchOffsetFrom is ResetFetchOffset for a fetcher that resolved the
// offset from, its fetched offset: it sets the fetched offset to offset
// only if it is still from (the stream may have moved it back meanwhile,
// see Pause), and reports whether it did.
func (p *PartitionTopicInfo) ResetFetchOffsetFrom(from, offset int64) bool {
	p.pauseMu.Lock()
	defer p.pauseMu.Unlock()
	if p.fetchedOffset.Load() != from {
		return false
	}
	p.fetchedOffset.Store(offset)
	return true
}

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

// Enqueue is EnqueueFrom at the partition's fetched offset, for messages
// whose memory is not recycled: for a caller that alone moves the
// partition (a fetcher uses EnqueueFrom with the offset it fetched at).
func (p *PartitionTopicInfo) Enqueue(ctx context.Context, msgs []*Message, nextFetchOffset int64) error {
	return p.EnqueueFrom(ctx, p.FetchedOffset(), msgs, nextFetchOffset, nil)
}

// EnqueueFrom puts the messages of one fetch, made at offset from, on the
// stream's queue as a FetchedDataChunk, blocking while the queue is full,
// then advances the fetched offset to nextFetchOffset. The chunk's
// FetchOffset is from and its NextOffset is nextFetchOffset. msgs must be
// this partition's messages in offset order; EnqueueFrom takes ownership
// of them.
//
// The fetched offset must still be from: a fetch made before the stream
// moved the offset back (see Pause) is refused with ErrMoved, and one
// queued while it was moved back is dropped by the iterator and does not
// move the offset (ErrMoved too). Nothing of it reaches the application:
// the partition is fetched again from where the stream left it.
//
// An empty msgs (a fetch whose records were all filtered out) still moves
// the partition on. If the application has consumed everything fetched
// before, the consumed offset moves to nextFetchOffset at once; otherwise
// a chunk without messages is queued, which moves it there when the
// iterator reaches it.
//
// release, if not nil, is called once the stream can no longer hand out
// or use a message of msgs, so that their memory can be reused (messages
// whose memory the caller recycles). That is when the iterator moves past
// the chunk (in the call to Next that follows the one that returned its
// last message, which by the recycling contract ends that message's
// validity), or when the chunk is dropped: its partition revoked or
// paused, the stream cleared or shut down (a chunk being read is dropped
// in the next call to Next), or at once when the chunk is not queued
// (msgs empty, or an error is returned). release is called at most once,
// from whichever goroutine drops the chunk; a chunk that is never dropped
// (say a stream nobody reads any more) is left to the garbage collector
// and release is not called. Before release is called the messages are
// cut off from the stream: their partition is cleared and their Offset
// set to -1, so that one kept past its validity marks nothing (see
// Message).
//
// EnqueueFrom returns ErrClosed, without queueing, if the queue is closed
// or the partition is revoked (also while blocked), ErrPaused if the
// partition is paused (also while blocked), ErrMoved as above, and
// ctx.Err() if ctx ends first. The fetched offset then stays put.
func (p *PartitionTopicInfo) EnqueueFrom(ctx context.Context, from int64, msgs []*Message, nextFetchOffset int64, release func()) error {
	if len(msgs) == 0 && release != nil {
		release()
		release = nil
	}
	epoch, halt, err := p.admit(from)
	if err != nil {
		if release != nil {
			release()
		}
		return err
	}
	if len(msgs) > 0 {
		var size int
		for _, m := range msgs {
			if m != nil {
				size += len(m.Key) + len(m.Value)
			}
		}
		chunk := &FetchedDataChunk{Messages: msgs, TopicInfo: p, FetchOffset: from, NextOffset: nextFetchOffset, release: release, epoch: epoch}
		if err := p.queue.put(ctx, chunk, p.revokedCh, halt); err != nil {
			chunk.done()
			return err
		}
		if c := p.counters; c != nil {
			c.bytes.Add(int64(size))
		}
	} else if nextFetchOffset > from && !p.skipFiltered(from, nextFetchOffset) {
		chunk := &FetchedDataChunk{TopicInfo: p, FetchOffset: from, NextOffset: nextFetchOffset, epoch: epoch}
		if err := p.queue.put(ctx, chunk, p.revokedCh, halt); err != nil {
			return err
		}
	}
	p.pauseMu.Lock()
	defer p.pauseMu.Unlock()
	if p.epoch.Load() != epoch {
		return ErrMoved // the chunk queued is dropped
	}
	p.fetchedOffset.Store(nextFetchOffset)
	return nil
}

// admit checks that the partition takes a chunk fetched at from and
// returns the epoch the chunk belongs to and the channel a pause closes.
func (p *PartitionTopicInfo) admit(from int64) (uint64, <-chan struct{}, error) {
	p.pauseMu.Lock()
	defer p.pauseMu.Unlock()
	switch {
	case p.revoked.Load():
		return 0, nil, ErrClosed
	case p.paused.Load():
		return 0, nil, ErrPaused
	case p.fetchedOffset.Load() != from:
		return 0, nil, ErrMoved
	}
	return p.epoch.Load(), p.halt, nil
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
// stream that owns the partition: for example a committed offset that
// cannot be read. The fetched offset does not move. It fails like
// EnqueueFrom at the fetched offset. A fetcher that stops at an error uses
// EnqueueStop.
func (p *PartitionTopicInfo) EnqueueError(ctx context.Context, err error) error {
	return p.enqueueError(ctx, p.FetchedOffset(), err, false)
}

// EnqueueStop is EnqueueError for a fetcher that cannot get the partition
// past from, its fetched offset (a message larger than the fetch size:
// ErrMessageTooLarge; records that cannot be decoded): once the error is
// queued, Stopped reports true and the fetcher leaves the partition alone,
// until the stream drops the partition's chunks for a pause and moves its
// fetched offset back (see Pause), the error chunk among them: then the
// partition is to be fetched again, and the error comes again after the
// messages before it. It fails like EnqueueFrom.
func (p *PartitionTopicInfo) EnqueueStop(ctx context.Context, from int64, err error) error {
	return p.enqueueError(ctx, from, err, true)
}

func (p *PartitionTopicInfo) enqueueError(ctx context.Context, from int64, err error, stop bool) error {
	epoch, halt, aerr := p.admit(from)
	if aerr != nil {
		return aerr
	}
	chunk := &FetchedDataChunk{TopicInfo: p, FetchOffset: from, Err: err, epoch: epoch}
	if err := p.queue.put(ctx, chunk, p.revokedCh, halt); err != nil {
		return err
	}
	if stop {
		p.pauseMu.Lock()
		if p.epoch.Load() == epoch {
			p.stopped.Store(epoch + 1)
		}
		p.pauseMu.Unlock()
	}
	return nil
}

// Stopped reports whether a fetcher queued an error with EnqueueStop and
// the partition has not been moved back since: fetching it again would
// only meet the same error.
func (p *PartitionTopicInfo) Stopped() bool { return p.stopped.Load() == p.epoch.Load()+1 }

// rewind moves the fetched offset back to offset, where the stream stands
// in the partition, when the stream drops chunks of the paused partition
// that were queued in epoch: every chunk of that epoch still queued is
// dropped as it reaches the iterator, and a fetch in flight that was made
// from the old offset is refused (EnqueueFrom). It does nothing if the
// partition has been moved back since epoch (a chunk of an earlier epoch
// was dropped already).
func (p *PartitionTopicInfo) rewind(epoch uint64, offset int64) {
	p.pauseMu.Lock()
	defer p.pauseMu.Unlock()
	if p.epoch.Load() != epoch {
		return
	}
	p.epoch.Store(epoch + 1)
	p.fetchedOffset.Store(offset)
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
// keep flowing. The stream keeps nothing of a paused partition: its
// iterator drops the partition's chunks as it comes to them (the one it
// is in the middle of included), releasing their memory, and moves the
// fetched offset back to where it stands in the partition, so that after
// Resume the fetcher fetches them again. Nothing is lost or handed out
// twice: the first message after Resume is the one after the last message
// handed out before the pause. Chunks a paused partition has in the queue
// hold their places there, within queued.max.message.chunks, until the
// iterator comes to them; an error chunk met while paused is kept aside
// and comes after Resume. A message handed out before the pause can still
// be marked consumed. Pause is idempotent.
func (p *PartitionTopicInfo) Pause() {
	p.pauseMu.Lock()
	defer p.pauseMu.Unlock()
	if p.paused.Load() {
		return
	}
	p.paused.Store(true)
	close(p.halt)
}

// Resume undoes Pause: the fetcher may fetch the partition again, from
// where the stream left it, and the iterator hands out the error it kept
// aside, if any, then the newly fetched chunks. A fetcher whose
// partitions were all paused picks it up within its backoff
// (refresh.leader.backoff.ms). Resume is idempotent.
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
