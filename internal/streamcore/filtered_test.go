package streamcore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Records the fetcher filters out (transaction markers, aborted
// transactions, compacted gaps) hold no message to consume. Once every
// message before them has been consumed, the consumed offset, the one
// committed, moves past them; never earlier.

func TestConsumedOffsetPassesFilteredTailOfChunk(t *testing.T) {
	s := newTestStream(t, 2, -1)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	// Messages 0-9, then a commit marker at 10.
	require.NoError(t, pti.Enqueue(context.Background(), newMessages("t", 0, offsetRange(0, 10)...), 11))
	assert.Equal(t, offsetRange(0, 10), nextOffsets(t, s, 10))
	assert.Equal(t, int64(9), pti.ConsumedOffset(), "message 9 is handed out, not consumed")
	_, err := s.Next(shortCtx(t))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, int64(11), pti.ConsumedOffset(), "past the marker once message 9 is consumed")
}

func TestConsumedOffsetPassesFilteredFetchWhenCaughtUp(t *testing.T) {
	s := newTestStream(t, 2, -1)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	ctx := context.Background()
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, offsetRange(0, 10)...), 10))
	nextOffsets(t, s, 10)
	_, err := s.Next(shortCtx(t))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, int64(10), pti.ConsumedOffset())

	// A later fetch holds only a marker (10) and an aborted batch (11).
	require.NoError(t, pti.Enqueue(ctx, nil, 12))
	assert.Equal(t, int64(12), pti.ConsumedOffset())
	assert.Equal(t, int64(12), pti.FetchedOffset())
	assert.Equal(t, 0, QueueOf(s).Len(), "nothing to queue when everything before was consumed")
}

func TestConsumedOffsetPassesFilteredFetchOnlyAfterEarlierMessages(t *testing.T) {
	s := newTestStream(t, 3, -1)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	ctx := context.Background()
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, offsetRange(0, 5)...), 5))
	assert.Equal(t, offsetRange(0, 3), nextOffsets(t, s, 3))
	// Offsets 5 and 6 are filtered while the application is at message 2.
	require.NoError(t, pti.Enqueue(ctx, nil, 7))
	assert.Equal(t, int64(2), pti.ConsumedOffset(), "messages 2-4 are not consumed yet")
	assert.Equal(t, []int64{3, 4}, nextOffsets(t, s, 2))
	assert.Equal(t, int64(4), pti.ConsumedOffset(), "message 4 is handed out, not consumed")
	_, err := s.Next(shortCtx(t))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, int64(7), pti.ConsumedOffset())

	// The messages after the filtered ones come as usual.
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, 7, 8), 9))
	assert.Equal(t, []int64{7, 8}, nextOffsets(t, s, 2))
	assert.Equal(t, int64(8), pti.ConsumedOffset())
}

func TestConsumedOffsetStaysBeforeUndeliveredMessages(t *testing.T) {
	t.Run("cleared", func(t *testing.T) {
		s := newTestStream(t, 2, -1)
		pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
		require.NoError(t, pti.Enqueue(context.Background(), newMessages("t", 0, offsetRange(0, 5)...), 7))
		nextOffsets(t, s, 2)
		s.clear()
		_, err := s.Next(shortCtx(t))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, int64(2), pti.ConsumedOffset(), "messages 2-4 were never delivered")
	})
	t.Run("revoked", func(t *testing.T) {
		s := newTestStream(t, 2, -1)
		pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
		require.NoError(t, pti.Enqueue(context.Background(), newMessages("t", 0, 0, 1), 4))
		nextOffsets(t, s, 2)
		pti.Revoke()
		_, err := s.Next(shortCtx(t))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, int64(1), pti.ConsumedOffset(), "a revoked partition's offset does not move")
	})
}
