package fetch

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
)

// Each fetcher owns free lists of the memory its data path uses, so that a
// response, a decompressed payload or a slab of messages that is done with
// is read or decoded into again instead of being allocated (zeroed, and
// often faulted in page by page) anew:
//
//   - Response buffers, in every mode: a response no queued message
//     aliases (Config.RecycleMessages off: one whose partitions were all
//     compressed, filtered or empty; on: any, once every chunk of it is
//     consumed) is read into again. At most one waits in the free list:
//     the spare buffer of the memory bound.
//   - With Config.RecycleMessages, the message slabs, the chunks' message
//     lists and the buffers compressed batches are decompressed into. A
//     chunk holds them in a lease, with a reference to the response its
//     messages alias, and gives them back when the stream is done with it
//     (streamcore.PartitionTopicInfo.EnqueueFrom). The free lists keep at
//     most the decoding limit's worth of them (maxFree).
//
// Buffers are reference-counted: a response is held by the fetcher while
// it processes it and by each chunk whose messages alias it; a payload by
// the decoder while it decodes its batch and by each chunk of it. A buffer
// goes back to its free list when the last holder lets go, and only then.
// In test binaries what goes back is poisoned (overwritten) first, so that
// a message used after its chunk was released shows garbage.

// poisonReleased: memory given back to the free lists is overwritten
// first. On in test binaries.
var poisonReleased = testing.Testing()

const (
	// poisonByte fills the bytes of poisoned buffers.
	poisonByte = 0xdb
	// maxFreeResponses is how many response buffers wait in a fetcher's
	// free list: the memory bound's spare buffer.
	maxFreeResponses = 1
	// recycledSlab is the number of messages in a pooled slab.
	recycledSlab = 512
)

// poisonMessage is what the messages of a released slab read as.
var poisonMessage = streamcore.Message{Topic: "zkconsumer: recycled message used after its chunk was released",
	Partition: -1, Offset: -1 << 62, Value: []byte("recycled")}

// pbuf is a reference-counted buffer from a fetcher's pools: a response or
// a decompressed payload.
type pbuf struct {
	b    []byte
	refs atomic.Int32
	p    *pools
	resp bool // a response buffer
}

// acquire adds a holder.
func (b *pbuf) acquire() { b.refs.Add(1) }

// release drops a holder; the last one gives the buffer back to its free
// list.
func (b *pbuf) release() {
	switch n := b.refs.Add(-1); {
	case n == 0 && b.p != nil:
		b.p.put(b)
	case n < 0 && poisonReleased:
		panic("pooled buffer released more often than acquired")
	}
}

// pools are one fetcher's free lists. Their methods are safe for
// concurrent use: chunks are released by the streams' readers.
type pools struct {
	mu    sync.Mutex
	resp  []*pbuf
	bufs  []*pbuf
	slabs [][]streamcore.Message
	ptrs  [][]*streamcore.Message
	// free is the bytes in bufs, slabs and ptrs; maxFree their bound,
	// the largest decoding limit the fetcher has used.
	free, maxFree int64
}

// noteLimit raises the free lists' bound to a decoding limit in use.
func (p *pools) noteLimit(limit int64) {
	p.mu.Lock()
	p.maxFree = max(p.maxFree, limit)
	p.mu.Unlock()
}

// response returns a buffer of n bytes for a response, held once. A nil
// p allocates one that is never recycled.
func (p *pools) response(n int) *pbuf {
	if p == nil {
		b := &pbuf{b: make([]byte, n), resp: true}
		b.refs.Store(1)
		return b
	}
	p.mu.Lock()
	var b *pbuf
	if k := len(p.resp); k > 0 {
		b = p.resp[k-1]
		p.resp[k-1] = nil
		p.resp = p.resp[:k-1]
	}
	p.mu.Unlock()
	if b == nil || cap(b.b) < n {
		b = &pbuf{b: make([]byte, n), p: p, resp: true}
	}
	b.b = b.b[:n]
	b.refs.Store(1)
	return b
}

// payload returns a buffer for a decompressed payload, held once: the
// most recently freed one of the free list's whose capacity is between
// least and most bytes (most: what the chunk can be charged), or a new
// one of capacity alloc.
func (p *pools) payload(least, most, alloc int) *pbuf {
	p.mu.Lock()
	var b *pbuf
	for i := len(p.bufs) - 1; i >= 0; i-- {
		if c := p.bufs[i]; cap(c.b) >= least && cap(c.b) <= most {
			b = c
			p.bufs = slices.Delete(p.bufs, i, i+1)
			p.free -= int64(cap(c.b))
			break
		}
	}
	p.mu.Unlock()
	if b == nil {
		b = &pbuf{b: make([]byte, 0, alloc), p: p}
	}
	b.b = b.b[:0]
	b.refs.Store(1)
	return b
}

// put takes a buffer back, or leaves it to the garbage collector when its
// free list is full.
func (p *pools) put(b *pbuf) {
	if poisonReleased {
		poison(b.b[:cap(b.b)])
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case b.resp && len(p.resp) < maxFreeResponses:
		p.resp = append(p.resp, b)
	case !b.resp && p.free+int64(cap(b.b)) <= p.maxFree:
		p.bufs = append(p.bufs, b)
		p.free += int64(cap(b.b))
	}
}

func poison(b []byte) {
	for i := range b {
		b[i] = poisonByte
	}
}

// slab returns a slab of recycledSlab messages, empty.
func (p *pools) slab() []streamcore.Message {
	p.mu.Lock()
	if k := len(p.slabs); k > 0 {
		s := p.slabs[k-1]
		p.slabs[k-1] = nil
		p.slabs = p.slabs[:k-1]
		p.free -= recycledSlab * msgCost
		p.mu.Unlock()
		return s[:0]
	}
	p.mu.Unlock()
	return make([]streamcore.Message, 0, recycledSlab)
}

// messageList returns a list for n message pointers, empty: one of the
// free list's of at most twice n, or a new one.
func (p *pools) messageList(n int) []*streamcore.Message {
	p.mu.Lock()
	for i, l := range p.ptrs {
		if cap(l) >= n && cap(l) <= 2*n {
			p.ptrs = slices.Delete(p.ptrs, i, i+1)
			p.free -= int64(cap(l)) * ptrCost
			p.mu.Unlock()
			return l[:0]
		}
	}
	p.mu.Unlock()
	return make([]*streamcore.Message, 0, n)
}

// lease is what one chunk holds of its fetcher's pools: the slabs its
// messages live in, its list of messages, the payloads and the response
// they alias.
type lease struct {
	p     *pools
	resp  *pbuf
	bufs  []*pbuf
	slabs [][]streamcore.Message
	ptrs  []*streamcore.Message
}

func (p *pools) newLease() *lease { return &lease{p: p} }

// hold adds a holder to b for the chunk; nil does nothing.
func (l *lease) hold(b *pbuf) {
	if b == nil {
		return
	}
	b.acquire()
	l.bufs = append(l.bufs, b)
}

// holdResponse makes the chunk a holder of the response its messages
// alias.
func (l *lease) holdResponse(b *pbuf) {
	if b != nil && l.resp == nil {
		b.acquire()
		l.resp = b
	}
}

// release gives everything back; the chunk's messages must not be used
// any more. Called once (streamcore.PartitionTopicInfo.EnqueueFrom
// guarantees it for chunks it took).
func (l *lease) release() {
	p := l.p
	for _, b := range l.bufs {
		b.release()
	}
	if l.resp != nil {
		l.resp.release()
	}
	if poisonReleased {
		for _, s := range l.slabs {
			s = s[:cap(s)]
			for i := range s {
				s[i] = poisonMessage
			}
		}
		clear(l.ptrs[:cap(l.ptrs)])
	}
	p.mu.Lock()
	for _, s := range l.slabs {
		if cap(s) == recycledSlab && p.free+recycledSlab*msgCost <= p.maxFree {
			p.slabs = append(p.slabs, s)
			p.free += recycledSlab * msgCost
		}
	}
	if n := int64(cap(l.ptrs)); n > 0 && p.free+n*ptrCost <= p.maxFree {
		p.ptrs = append(p.ptrs, l.ptrs)
		p.free += n * ptrCost
	}
	p.mu.Unlock()
	*l = lease{}
}
