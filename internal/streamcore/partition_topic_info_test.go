package streamcore

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEnqueueQueuesChunkAndAdvancesFetchedOffset(t *testing.T) {
	q := newTestQueue(t, 2)
	pti := NewPartitionTopicInfo("t", 3, q, 10, 10, 1<<20)
	assert.Equal(t, int32(1<<20), pti.FetchSize)
	assert.Same(t, q, pti.Queue())

	msgs := newMessages("t", 3, 8, 9, 10, 11)
	require.NoError(t, pti.Enqueue(context.Background(), msgs, 12))
	assert.Equal(t, int64(12), pti.FetchedOffset())
	assert.Equal(t, int64(10), pti.ConsumedOffset())

	chunk, err := q.take(context.Background(), nil)
	require.NoError(t, err)
	assert.Same(t, pti, chunk.TopicInfo)
	assert.Equal(t, int64(10), chunk.FetchOffset, "fetch offset is the fetched offset before the call")
	assert.Equal(t, int64(12), chunk.NextOffset, "next offset is the fetched offset after the call")
	assert.Equal(t, msgs, chunk.Messages)
	assert.NoError(t, chunk.Err)
	assert.Equal(t, "t-3: fetched offset 12, consumed offset 10", pti.String())
}

func TestEnqueueEmptyAdvancesOffsets(t *testing.T) {
	q := newTestQueue(t, 1)
	pti := NewPartitionTopicInfo("t", 0, q, 5, 5, 100)
	require.NoError(t, pti.Enqueue(context.Background(), nil, 9))
	assert.Equal(t, int64(9), pti.FetchedOffset())
	assert.Equal(t, int64(9), pti.ConsumedOffset(), "nothing before 5 is left to consume")
	assert.Equal(t, 0, q.Len())

	// Behind: a chunk without messages moves the consumed offset later.
	pti = NewPartitionTopicInfo("t", 0, q, 3, 5, 100)
	require.NoError(t, pti.Enqueue(context.Background(), nil, 9))
	assert.Equal(t, int64(9), pti.FetchedOffset())
	assert.Equal(t, int64(3), pti.ConsumedOffset())
	chunk, err := q.take(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, chunk.Messages)
	assert.Equal(t, int64(5), chunk.FetchOffset)
	assert.Equal(t, int64(9), chunk.NextOffset)
}

func TestResetOffsets(t *testing.T) {
	pti := NewPartitionTopicInfo("t", 0, newTestQueue(t, 1), 5, 7, 100)
	pti.ResetConsumeOffset(2)
	pti.ResetFetchOffset(3)
	assert.Equal(t, int64(2), pti.ConsumedOffset(), "reset may move backwards")
	assert.Equal(t, int64(3), pti.FetchedOffset())
}

func TestEnqueueFailsWhenRevoked(t *testing.T) {
	q := newTestQueue(t, 1)
	pti := NewPartitionTopicInfo("t", 0, q, 0, 0, 100)
	ctx := context.Background()
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, 0), 1))

	// Blocked on the full queue, then revoked.
	enq := async(func() result { return result{err: pti.Enqueue(ctx, newMessages("t", 0, 1), 2)} })
	pti.Revoke()
	assert.ErrorIs(t, await(t, enq).err, ErrClosed)
	assert.True(t, pti.Revoked())
	assert.Equal(t, int64(1), pti.FetchedOffset(), "a failed enqueue does not advance")

	// Fails fast afterwards, even with room in the queue.
	q.clear()
	assert.ErrorIs(t, pti.Enqueue(ctx, newMessages("t", 0, 1), 2), ErrClosed)
	assert.ErrorIs(t, pti.EnqueueError(ctx, errors.New("x")), ErrClosed)
	assert.Equal(t, 0, q.Len())
	pti.Revoke() // idempotent
}

func TestEnqueueFailsWhenQueueClosedOrContextEnds(t *testing.T) {
	q := newTestQueue(t, 1)
	pti := NewPartitionTopicInfo("t", 0, q, 0, 0, 100)
	require.NoError(t, pti.Enqueue(context.Background(), newMessages("t", 0, 0), 1))

	assert.ErrorIs(t, pti.Enqueue(shortCtx(t), newMessages("t", 0, 1), 2), context.DeadlineExceeded)
	assert.Equal(t, int64(1), pti.FetchedOffset())

	enq := async(func() result { return result{err: pti.Enqueue(context.Background(), newMessages("t", 0, 1), 2)} })
	q.close()
	assert.ErrorIs(t, await(t, enq).err, ErrClosed)
	assert.ErrorIs(t, pti.EnqueueError(context.Background(), errors.New("x")), ErrClosed)
}

func TestEnqueueErrorQueuesErrorChunk(t *testing.T) {
	q := newTestQueue(t, 1)
	pti := NewPartitionTopicInfo("t", 1, q, 4, 4, 100)
	boom := errors.New("boom")
	require.NoError(t, pti.EnqueueError(context.Background(), boom))
	assert.Equal(t, int64(4), pti.FetchedOffset())
	chunk, err := q.take(context.Background(), nil)
	require.NoError(t, err)
	assert.Same(t, pti, chunk.TopicInfo)
	assert.Equal(t, int64(4), chunk.FetchOffset)
	assert.Same(t, boom, chunk.Err)
	assert.Empty(t, chunk.Messages)
}

func TestPartitionError(t *testing.T) {
	inner := errors.New("offset 7 out of range")
	err := error(&PartitionError{Topic: "t", Partition: 2, Err: inner})
	assert.Equal(t, "partition t-2: offset 7 out of range", err.Error())
	assert.ErrorIs(t, err, inner)
	var pe *PartitionError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, int32(2), pe.Partition)
	assert.Equal(t, "partition t-0: <nil>", (&PartitionError{Topic: "t"}).Error())
}
