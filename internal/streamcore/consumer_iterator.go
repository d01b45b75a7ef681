package streamcore

import (
	"context"
	"slices"
	"sync/atomic"
	"time"
)

// consumerIterator hands out the messages of one stream in order (Kafka's
// ConsumerIterator); a stream has exactly one, and KafkaStream.Next is its
// one entry.
//
// next must be called from one goroutine at a time. MarkConsumed, and the
// stream's Control, may be used from any goroutine, as may
// PartitionTopicInfo.Revoke, Pause and Resume.
//
// Delivery is at least once: a message counts as consumed, and so moves its
// partition's consumed offset to Offset+1, only when the caller asks for the
// next message on the stream or marks it with MarkConsumed. Kafka's iterator
// instead advanced the offset as it handed the message out, so a commit
// could cover a message the application had not finished.
type consumerIterator struct {
	queue   *ChunkQueue
	timeout time.Duration
	timer   *time.Timer

	// clears counts Clear calls; a current chunk taken before the latest
	// Clear is dropped.
	clears atomic.Uint64
	// polls counts fill calls: the caller asking for another chunk.
	polls atomic.Uint64
	// waiting is set while Next blocks for a chunk or for a fence.
	waiting atomic.Bool

	// Owned by the goroutine calling Next.
	chunk       *FetchedDataChunk
	chunkClears uint64
	pos         int
	prev        *Message
	prevInfo    *PartitionTopicInfo
	delivered   int64 // messages of the current chunk handed out, not yet counted
	// parked holds the error chunks of paused partitions, and any chunk
	// of theirs that came behind one, in queue order (see
	// PartitionTopicInfo.Pause); other chunks of paused partitions are
	// dropped, never kept.
	parked []parkedChunk
}

// parkedChunk is a chunk set aside while its partition is paused.
type parkedChunk struct {
	chunk  *FetchedDataChunk
	clears uint64
}

func newConsumerIterator(q *ChunkQueue, consumerTimeout time.Duration) *consumerIterator {
	return &consumerIterator{queue: q, timeout: consumerTimeout}
}

// next is KafkaStream.Next (see its documentation).
func (it *consumerIterator) next(ctx context.Context) (*Message, error) {
	if it.prev != nil {
		it.prevInfo.advanceConsumed(it.prev.Offset + 1)
		it.prev, it.prevInfo = nil, nil
	}
	for {
		if it.queue.Closed() {
			if it.chunk != nil {
				it.count(it.chunk.TopicInfo)
				it.chunk.done()
			}
			for _, p := range it.parked {
				p.chunk.done()
			}
			it.chunk, it.parked = nil, nil
			return nil, ErrShutdown
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if it.chunk != nil {
			m, fenced := it.nextInChunk()
			if m != nil {
				return m, nil
			}
			if fenced != nil {
				if err := it.awaitFence(ctx, fenced); err != nil {
					return nil, err
				}
				continue
			}
		}
		if p, ok := it.unpark(); ok {
			if err := it.activate(p); err != nil {
				return nil, err
			}
			continue
		}
		if err := it.fill(ctx); err != nil {
			return nil, err
		}
	}
}

// nextInChunk returns the next deliverable message of the current chunk, or
// nil, having dropped the chunk, when there is none. When the partition's
// fence does not hold, it keeps its place and returns the fence instead.
func (it *consumerIterator) nextInChunk() (*Message, Fence) {
	c := it.chunk
	info := c.TopicInfo
	for it.pos < len(c.Messages) {
		if info.revoked.Load() || it.clears.Load() != it.chunkClears {
			break
		}
		if info.paused.Load() {
			it.count(info)
			it.dropPaused(c, it.standing())
			it.chunk, it.pos = nil, 0
			return nil, nil
		}
		m := c.Messages[it.pos]
		if m == nil || m.Offset < info.consumedOffset.Load() {
			it.pos++
			continue
		}
		if f := info.fence; f != nil && !f.Held() {
			return nil, f
		}
		it.pos++
		// Set on hand-out, not on Enqueue: a recycled message's memory
		// may hold a message not handed out yet, which must not mark.
		m.info = info
		it.prev, it.prevInfo = m, info
		it.delivered++
		return m, nil
	}
	if it.pos == len(c.Messages) {
		c.passFiltered()
	}
	it.count(info)
	// The caller has asked for the message after the chunk's last one (or
	// the chunk was dropped): its memory can be recycled.
	c.done()
	it.chunk, it.pos = nil, 0
	return nil, nil
}

// count adds the messages handed out from the current chunk to its
// partition's Counters: once per chunk, never per message.
func (it *consumerIterator) count(info *PartitionTopicInfo) {
	if n := it.delivered; n > 0 {
		if c := info.counters; c != nil {
			c.messages.Add(n)
		}
		it.delivered = 0
	}
}

// awaitFence waits until f holds again, the current chunk's partition is
// revoked, cleared or paused, the stream shuts down, the consumer timeout
// passes (ErrConsumerTimeout; the iterator keeps its place) or ctx ends.
func (it *consumerIterator) awaitFence(ctx context.Context, f Fence) error {
	info := it.chunk.TopicInfo
	it.waiting.Store(true)
	defer it.waiting.Store(false)
	if c := info.counters; c != nil {
		start := time.Now()
		defer func() { c.fenced.Add(int64(time.Since(start))) }()
	}
	var timeout <-chan time.Time
	if it.timeout >= 0 {
		if it.timer == nil {
			it.timer = time.NewTimer(it.timeout)
		} else {
			it.timer.Reset(it.timeout)
		}
		defer it.timer.Stop()
		timeout = it.timer.C
	}
	halt := info.haltCh()
	for {
		changed := f.Changed()
		if f.Held() || info.revoked.Load() || info.paused.Load() || it.clears.Load() != it.chunkClears {
			return nil
		}
		select {
		case <-changed:
		case <-info.revokedCh:
			return nil
		case <-halt:
			return nil
		case <-it.queue.closed:
			return nil
		case <-timeout:
			return ErrConsumerTimeout
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// fill takes the next chunk off the queue and makes it current. It drops
// the chunk when its partition is revoked, has been moved back since the
// chunk was queued, or is paused (a paused partition's error chunk is set
// aside instead), and sets it aside behind the partition's chunks set
// aside already. It returns nil without a current chunk when the chunk was
// dropped or set aside (or a resumed partition woke the take), and a
// *PartitionError for an error chunk.
func (it *consumerIterator) fill(ctx context.Context) error {
	it.polls.Add(1)
	it.waiting.Store(true)
	c, err := it.take(ctx)
	it.waiting.Store(false)
	if err != nil {
		if err == ErrClosed {
			return ErrShutdown
		}
		return err
	}
	if c == nil {
		return nil
	}
	info := c.TopicInfo
	if info == nil || info.Revoked() || c.epoch != info.epoch.Load() {
		c.done()
		return nil
	}
	p := parkedChunk{chunk: c, clears: it.clears.Load()}
	switch {
	case info.paused.Load() && c.Err == nil:
		it.dropPaused(c, c.FetchOffset)
		return nil
	case info.paused.Load() || it.hasParked(info):
		it.park(p)
		return nil
	}
	return it.activate(p)
}

// dropPaused drops c, a chunk of a paused partition, and moves the
// partition's fetched offset back to at, where the stream stands in it,
// for the fetcher to fetch what c and the partition's later chunks held
// again once the partition is resumed; those chunks are dropped as they
// come (see PartitionTopicInfo.Pause).
func (it *consumerIterator) dropPaused(c *FetchedDataChunk, at int64) {
	c.TopicInfo.rewind(c.epoch, at)
	c.done()
}

// standing returns where the stream stands in the current chunk's
// partition: the offset after the last message of the chunk it has gone
// past (handed out, or skipped as consumed already), or the chunk's fetch
// offset.
func (it *consumerIterator) standing() int64 {
	c := it.chunk
	at := c.FetchOffset
	for i := it.pos - 1; i >= 0; i-- {
		if m := c.Messages[i]; m != nil {
			return max(at, m.Offset+1)
		}
	}
	return at
}

// activate makes p's chunk current, at p's position.
func (it *consumerIterator) activate(p parkedChunk) error {
	c := p.chunk
	// As in Kafka: a chunk that starts beyond the consumed offset means the
	// messages in between were dropped (a cleared queue); consumption
	// resumes at the chunk, and they are not delivered.
	c.TopicInfo.advanceConsumed(c.FetchOffset)
	if c.Err != nil {
		c.done()
		return &PartitionError{Topic: c.TopicInfo.Topic, Partition: c.TopicInfo.Partition, Err: c.Err}
	}
	it.chunk, it.pos, it.chunkClears = c, 0, p.clears
	return nil
}

// park sets p, the newest chunk of its partition, aside until its
// partition is resumed.
func (it *consumerIterator) park(p parkedChunk) { it.parked = append(it.parked, p) }

// hasParked reports whether chunks of info are set aside.
func (it *consumerIterator) hasParked(info *PartitionTopicInfo) bool {
	for _, p := range it.parked {
		if p.chunk.TopicInfo == info {
			return true
		}
	}
	return false
}

// unpark removes and returns the oldest chunk set aside whose partition is
// no longer paused; the chunks of one partition come out in order. Chunks
// of revoked partitions, cleared since or moved back since, are dropped.
func (it *consumerIterator) unpark() (parkedChunk, bool) {
	if len(it.parked) == 0 {
		return parkedChunk{}, false
	}
	clears := it.clears.Load()
	kept := it.parked[:0]
	var out parkedChunk
	found := false
	// Partitions seen paused in this pass stay held for the rest of it: a
	// Resume between two of a partition's chunks must not let the later
	// one out first.
	var held []*PartitionTopicInfo
	for _, p := range it.parked {
		info := p.chunk.TopicInfo
		switch {
		case info.revoked.Load() || p.clears != clears || p.chunk.epoch != info.epoch.Load():
			p.chunk.done() // dropped
			continue
		case info.paused.Load() && p.chunk.Err == nil:
			// Set aside behind an error, then paused again.
			it.dropPaused(p.chunk, p.chunk.FetchOffset)
			continue
		case !found && !slices.Contains(held, info):
			if !info.paused.Load() {
				out, found = p, true
				continue
			}
			held = append(held, info)
		}
		kept = append(kept, p)
	}
	clear(it.parked[len(kept):])
	it.parked = kept
	return out, found
}

// take waits for a chunk for at most the consumer timeout.
func (it *consumerIterator) take(ctx context.Context) (*FetchedDataChunk, error) {
	if it.timeout < 0 {
		return it.queue.take(ctx, nil)
	}
	if c, ok, err := it.queue.tryTake(); ok || err != nil {
		return c, err
	}
	if it.timeout == 0 {
		return nil, ErrConsumerTimeout
	}
	if it.timer == nil {
		it.timer = time.NewTimer(it.timeout)
	} else {
		it.timer.Reset(it.timeout)
	}
	c, err := it.queue.take(ctx, it.timer.C)
	it.timer.Stop()
	return c, err
}

// PartitionOf returns the partition, in the generation that handed m out,
// m belongs to; nil for a message that did not come from a stream.
func PartitionOf(m *Message) *PartitionTopicInfo {
	if m == nil {
		return nil
	}
	return m.info
}

// clear drops the current chunk and those set aside; see Control.Clear.
func (it *consumerIterator) clear() { it.clears.Add(1) }
