package fetch

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
)

// What decoding one partition's block allocates is charged against a
// limit (Config.MaxDecodedBytes, by default 32 × the fetch size): the
// decompressed payloads, the messages (with their pointers) and their
// headers. Together with the response buffer the messages alias, that is
// all a chunk holds, so the limit bounds a chunk's memory whatever the
// records say.

// errOverBudget: decoding an entry needs more than what is left of its
// block's decoding limit.
var errOverBudget = errors.New("decoding limit reached")

var (
	// ptrCost is what a message's pointer in its chunk's list costs.
	ptrCost = int64(reflect.TypeFor[*streamcore.Message]().Size())
	// msgCost is what one message costs: its streamcore.Message and its
	// pointer in the chunk.
	msgCost = int64(reflect.TypeFor[streamcore.Message]().Size()) + ptrCost
	// headerCost is what one record header costs.
	headerCost = int64(reflect.TypeFor[streamcore.Header]().Size())
)

const (
	// minHeaderSlab is the least number of headers allocated at once.
	minHeaderSlab = 64
	// lookAheadBytes is how far past the batch being decoded the
	// uncompressed entries are read (their checksums verified) to size
	// one slab of messages for all of them.
	lookAheadBytes = 256 << 10
)

// defaultMaxDecodedFactor is the default of Config.MaxDecodedBytes as a
// multiple of the fetch size (fetch.message.max.bytes), itself taken at
// 1 MiB at least.
const defaultMaxDecodedFactor = 32

// decodeLimit is the decoding limit of one partition's block: maxDecoded
// (Config.MaxDecodedBytes) if positive, else defaultMaxDecodedFactor ×
// max(fetchSize, 1 MiB).
func decodeLimit(maxDecoded int64, fetchSize int32) int64 {
	if maxDecoded > 0 {
		return maxDecoded
	}
	return defaultMaxDecodedFactor * max(int64(fetchSize), 1<<20)
}

// decodeBudget is the allocation side of one chunk: the slabs messages
// and headers are handed out from, and what is left of the limit.
type decodeBudget struct {
	limit, left int64
	// cur is the slab messages are handed out from (its length: those
	// handed out); slabs are the full ones before it.
	cur     []streamcore.Message
	slabs   [][]streamcore.Message
	nmsgs   int
	headers []streamcore.Header
	// verifiedTo: the checksums of the record batches before this
	// position in the block have been verified (see lookAhead).
	verifiedTo int
	// lease, with recycling, holds the pooled memory of the chunk.
	lease *lease
}

// room is what is left of the limit, in bytes.
func (b *decodeBudget) room() int {
	return int(min(b.left, math.MaxInt))
}

// charge records n bytes allocated, n at most room().
func (b *decodeBudget) charge(n int64) { b.left -= n }

// take charges n bytes if there is room for them.
func (b *decodeBudget) take(n int64) bool {
	if n > b.left {
		return false
	}
	b.left -= n
	return true
}

// free is the room for messages left in the current slab.
func (b *decodeBudget) free() int { return cap(b.cur) - len(b.cur) }

// newSlab makes a slab of room for n messages the current one; with
// recycling and n = recycledSlab, a pooled one.
func (b *decodeBudget) newSlab(n int64) {
	if len(b.cur) > 0 {
		b.slabs = append(b.slabs, b.cur)
	}
	if b.lease != nil && n == recycledSlab {
		b.cur = b.lease.p.slab()
	} else {
		b.cur = make([]streamcore.Message, 0, n)
	}
	if b.lease != nil {
		b.lease.slabs = append(b.lease.slabs, b.cur)
	}
}

// reserve makes room in the current slab for the next message, and for up
// to n-1 more after it if the slab must be replaced, charging what it
// allocates: errOverBudget if not even one more message fits. When it
// allocates and withAhead is set, the slab also gets room, as far as the
// limit allows, for the messages the uncompressed entries that follow can
// hold (lookAhead).
func (d *decoder) reserve(n int64, withAhead bool) error {
	if d.free() > 0 {
		return nil
	}
	fit := d.left / msgCost
	if fit == 0 {
		return errOverBudget
	}
	if d.lease != nil && fit >= recycledSlab {
		d.charge(recycledSlab * msgCost)
		d.newSlab(recycledSlab)
		return nil
	}
	n = max(1, min(n, fit))
	d.charge(n * msgCost)
	extra := int64(0)
	if withAhead {
		extra = min(int64(d.lookAhead()), d.left/msgCost)
		d.charge(extra * msgCost)
	}
	d.newSlab(n + extra)
	return nil
}

// newMsg hands out the next message of the slab; reserve has made room.
func (b *decodeBudget) newMsg() *streamcore.Message {
	n := len(b.cur)
	if n == cap(b.cur) {
		// Not reached: every message is reserved first. Charged anyway.
		b.charge(msgCost)
		b.newSlab(1)
		n = 0
	}
	b.cur = b.cur[:n+1]
	b.nmsgs++
	m := &b.cur[n]
	if b.lease != nil {
		*m = streamcore.Message{} // a recycled slab holds old messages
	}
	return m
}

// headerSlice returns n headers from a shared slab, charging the slab.
func (b *decodeBudget) headerSlice(n int) ([]streamcore.Header, error) {
	if cap(b.headers)-len(b.headers) < n {
		size := max(minHeaderSlab, n)
		if !b.take(int64(size) * headerCost) {
			if size == n || !b.take(int64(n)*headerCost) {
				return nil, errOverBudget
			}
			size = n
		}
		b.headers = make([]streamcore.Header, 0, size)
	}
	l := len(b.headers)
	b.headers = b.headers[:l+n]
	return b.headers[l : l+n : l+n], nil
}

// budgetMark is where decoding stood before an entry, for rollback.
type budgetMark struct {
	msgs         []streamcore.Message // the current slab then
	headers      []streamcore.Header
	slabs, nmsgs int
}

func (b *decodeBudget) mark() budgetMark {
	return budgetMark{msgs: b.cur, slabs: len(b.slabs), nmsgs: b.nmsgs, headers: b.headers}
}

// rollback forgets the messages and headers handed out since m, clearing
// them so that they pin nothing. What was charged stays charged.
func (b *decodeBudget) rollback(m budgetMark) {
	clear(m.msgs[len(m.msgs):cap(m.msgs)])
	for _, s := range append(b.slabs[m.slabs:], b.cur) {
		if !sameSlab(s, m.msgs) {
			clear(s)
		}
	}
	b.slabs = b.slabs[:m.slabs]
	b.cur = m.msgs
	b.nmsgs = m.nmsgs
	clear(m.headers[len(m.headers):cap(m.headers)])
	b.headers = m.headers
}

// sameSlab reports whether a and b share their array.
func sameSlab(a, b []streamcore.Message) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:cap(a)][0] == &b[:cap(b)][0]
}

// messages returns the messages handed out, in order, in a slice of
// their exact number (charged with each message); nil if none.
func (b *decodeBudget) messages() []*streamcore.Message {
	if b.nmsgs == 0 {
		return nil
	}
	var out []*streamcore.Message
	if b.lease != nil {
		out = b.lease.p.messageList(b.nmsgs)
		b.lease.ptrs = out[:0]
	} else {
		out = make([]*streamcore.Message, 0, b.nmsgs)
	}
	for _, s := range append(b.slabs, b.cur) {
		for i := range s {
			out = append(out, &s[i])
		}
	}
	if b.lease != nil {
		b.lease.ptrs = out
	}
	return out
}

// holdPayload makes the chunk a holder of the pooled payload buf its
// messages alias; nil (not pooled) does nothing.
func (b *decodeBudget) holdPayload(buf *pbuf) {
	if b.lease != nil {
		b.lease.hold(buf)
	}
}

// finishLease returns the chunk's lease, or releases it at once and
// returns nil when the chunk has no message.
func (b *decodeBudget) finishLease() *lease {
	l := b.lease
	if l == nil {
		return nil
	}
	b.lease = nil
	if b.nmsgs == 0 {
		l.release()
		return nil
	}
	return l
}

// lookAhead returns how many messages the uncompressed entries after the
// one being decoded, up to lookAheadBytes of them, can hold, so that one
// slab serves them all. With check.crcs it counts only record batches
// whose checksum it has verified (the decoder does not verify them again):
// no count sizes anything before its checksum is checked. A count is taken
// at most at what its batch's bytes can hold. It stops at the first
// compressed entry, whose messages are counted once it is decompressed.
func (d *decoder) lookAhead() int {
	it := d.it
	start, n := it.off, 0
	for it.off-start < lookAheadBytes {
		e, st, _ := it.next()
		if st != entryOK || e.codec() != codecNone {
			break
		}
		if e.magic < 2 {
			n++ // a message checks its own checksum
			continue
		}
		if d.opts.checkCRCs {
			if binary.BigEndian.Uint32(e.data[batchCRCAt:]) != crc32Castagnoli(e.data[batchAttrsAt:]) {
				break
			}
			d.verifiedTo = it.off
		}
		if e.attrs()&attrControl == 0 {
			count := int(max(0, int32(binary.BigEndian.Uint32(e.data[batchCountAt:]))))
			n += min(count, (len(e.data)-recordBatchOverhead)/minRecordSize)
		}
	}
	return n
}
