package streamcore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slabPool stands in for the fetcher's free lists of recycled messages
// (fetch.Config.RecycleMessages), without the poisoning the fetcher does
// in test binaries: a released slab is reused as it is in production, its
// messages overwritten in place, as the decoder does.
type slabPool struct{ free [][]Message }

// chunk returns the messages of partition p at offsets, in a reused slab
// if one is free, and the release function that frees the slab.
func (sp *slabPool) chunk(p *PartitionTopicInfo, offsets ...int64) ([]*Message, func()) {
	var slab []Message
	if n := len(sp.free); n > 0 {
		slab, sp.free = sp.free[n-1][:0], sp.free[:n-1]
	}
	msgs := make([]*Message, len(offsets))
	for i, o := range offsets {
		slab = append(slab, Message{}) // reuses the memory when it can
		m := &slab[len(slab)-1]
		*m = Message{Topic: p.Topic, Partition: p.Partition, Offset: o, Value: []byte("payload")}
		msgs[i] = m
	}
	return msgs, func() { sp.free = append(sp.free, slab) }
}

// TestRecycledMessageKeptPastNextMarksNothing is the review's misuse of
// recycling (zkconsumer.recycle.messages): a message kept past the call to
// Next that ends its validity, then marked consumed. Its memory is reused
// for messages not yet handed out, of another partition or of its own;
// marking it used to move that partition's consumed offset past them,
// unread, so that a commit would skip them. It must move nothing, and
// CommitMessages must refuse it (PartitionOf is nil).
func TestRecycledMessageKeptPastNextMarksNothing(t *testing.T) {
	for _, reuse := range []string{"other partition", "same partition"} {
		t.Run(reuse, func(t *testing.T) {
			ctx := context.Background()
			s := newTestStream(t, 4, 10*time.Millisecond)
			p0 := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
			p1 := NewPartitionTopicInfo("t", 1, QueueOf(s), 0, 0, 1<<20)
			var pool slabPool

			msgs, release := pool.chunk(p0, 0, 1, 2, 3)
			require.NoError(t, p0.EnqueueFrom(ctx, p0.FetchedOffset(), msgs, 4, release))
			var kept *Message
			for range 4 {
				m, err := s.Next(ctx)
				require.NoError(t, err)
				kept = m // misuse: kept past the next Next
			}
			require.Equal(t, int64(3), kept.Offset)
			_, err := s.Next(ctx) // done with p0's chunk: its slab is free
			require.ErrorIs(t, err, ErrConsumerTimeout)
			require.Len(t, pool.free, 1, "the chunk was released")
			assert.Nil(t, PartitionOf(kept), "released: belongs to no partition")
			assert.Equal(t, int64(-1), kept.Offset, "released: no offset")
			s.MarkConsumed(kept)
			assert.Equal(t, int64(4), p0.ConsumedOffset())

			// The slab is reused for messages not handed out yet.
			target, from := p1, int64(0)
			if reuse == "same partition" {
				target, from = p0, 4
			}
			msgs, release = pool.chunk(target, from, from+1, from+2, from+3)
			require.Same(t, msgs[3], kept, "the kept pointer now aliases an undelivered message")
			require.NoError(t, target.EnqueueFrom(ctx, target.FetchedOffset(), msgs, from+4, release))
			s.MarkConsumed(kept)
			MarkConsumed(kept)
			assert.Equal(t, from, target.ConsumedOffset(), "nothing of it read: its consumed offset must not move")
			assert.Nil(t, PartitionOf(kept), "CommitMessages refuses it")

			// The messages themselves still come out, and count when read.
			assert.Equal(t, []int64{from, from + 1, from + 2, from + 3}, nextOffsets(t, s, 4))
			_, err = s.Next(ctx)
			require.ErrorIs(t, err, ErrConsumerTimeout)
			assert.Equal(t, from+4, target.ConsumedOffset())
		})
	}
}
