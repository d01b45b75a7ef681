package streamcore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

func TestStreamQueueCapacity(t *testing.T) {
	s := newTestStream(t, 2, -1)
	assert.Equal(t, 2, QueueOf(s).Cap())
}

func TestIteratorSkipsBelowConsumedOffset(t *testing.T) {
	s := newTestStream(t, 4, -1)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 5, 5, 100)
	ctx := context.Background()

	// A compressed batch starting before the requested offset.
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, offsetRange(2, 9)...), 9))
	assert.Equal(t, []int64{5, 6, 7, 8}, nextOffsets(t, s, 4))

	// A chunk entirely below the consumed offset yields nothing, not even
	// its last message (no Scala skip quirk).
	pti.ResetConsumeOffset(20)
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, 9, 10, 11), 12))
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, 20, 21), 22))
	assert.Equal(t, []int64{20, 21}, nextOffsets(t, s, 2))
}

func TestIteratorPreservesPartitionOrderAcrossChunks(t *testing.T) {
	s := newTestStream(t, 2, -1)
	p0 := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	p1 := NewPartitionTopicInfo("t", 1, QueueOf(s), 0, 0, 100)
	const chunks, per = 50, 7

	done := make(chan error, 1)
	go func() {
		ctx := context.Background()
		for i := range int64(chunks) {
			for _, p := range []*PartitionTopicInfo{p0, p1} {
				if err := p.Enqueue(ctx, newMessages("t", p.Partition, offsetRange(i*per, (i+1)*per)...), (i+1)*per); err != nil {
					done <- err
					return
				}
			}
		}
		done <- nil
	}()

	next := map[int32]int64{}
	for range 2 * chunks * per {
		m, err := s.Next(context.Background())
		require.NoError(t, err)
		require.Equal(t, next[m.Partition], m.Offset)
		next[m.Partition]++
	}
	require.NoError(t, <-done)
}

func TestConsumedOffsetAdvancesOnNextOrMark(t *testing.T) {
	s := newTestStream(t, 2, 0)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	ctx := context.Background()
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, 0, 1, 2), 3))

	m0, err := s.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(0), pti.ConsumedOffset(), "handing a message out does not consume it")

	m1, err := s.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), pti.ConsumedOffset(), "asking for the next message consumes the previous one")

	s.MarkConsumed(m1)
	assert.Equal(t, int64(2), pti.ConsumedOffset())
	s.MarkConsumed(m0)
	assert.Equal(t, int64(2), pti.ConsumedOffset(), "marking never moves the offset back")

	_, err = s.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), pti.ConsumedOffset())

	// The call that finds nothing still consumes the previous message.
	_, err = s.Next(ctx)
	assert.ErrorIs(t, err, ErrConsumerTimeout)
	assert.Equal(t, int64(3), pti.ConsumedOffset())

	s.MarkConsumed(nil)                   // ignored
	s.MarkConsumed(&Message{Offset: 100}) // not from a stream: ignored
	assert.Equal(t, int64(3), pti.ConsumedOffset())
}

// TestMarkConsumedMarksTheMessagesOwnPartition: a mark goes to the
// partition of the message, forward only, whichever stream is asked (a
// worker may hold another stream of the consumer) and from the function
// MarkConsumed as from the method; a copy (Clone) marks the same
// partition; a message of a revoked partition moves nothing.
func TestMarkConsumedMarksTheMessagesOwnPartition(t *testing.T) {
	s := newTestStream(t, 2, 0)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	ctx := context.Background()
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, 0, 1, 2, 3), 4))
	var got []*Message
	for range 3 {
		m, err := s.Next(ctx)
		require.NoError(t, err)
		got = append(got, m)
	}
	require.Same(t, pti, PartitionOf(got[0]))
	other := newTestStream(t, 2, 0)
	other.MarkConsumed(got[2].Clone())
	assert.Equal(t, int64(3), pti.ConsumedOffset())
	MarkConsumed(got[0])
	assert.Equal(t, int64(3), pti.ConsumedOffset(), "marking never moves the offset back")

	MarkConsumed(nil)
	MarkConsumed(&Message{Offset: 100})
	assert.Nil(t, PartitionOf(&Message{Offset: 100}))
	assert.Equal(t, int64(3), pti.ConsumedOffset())

	m3, err := s.Next(ctx)
	require.NoError(t, err)
	pti.Revoke()
	s.MarkConsumed(m3)
	assert.Equal(t, int64(3), pti.ConsumedOffset(), "a revoked partition's offset stays")
}

func TestChunkBeyondConsumedOffsetMovesIt(t *testing.T) {
	s := newTestStream(t, 2, -1)
	// Messages 0..9 were fetched and then dropped (cleared queue).
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 10, 100)
	require.NoError(t, pti.Enqueue(context.Background(), newMessages("t", 0, 10, 11), 12))
	assert.Equal(t, []int64{10}, nextOffsets(t, s, 1))
	assert.Equal(t, int64(10), pti.ConsumedOffset())
}

func TestConsumerTimeoutLeavesIteratorUsable(t *testing.T) {
	s := newTestStream(t, 2, 20*time.Millisecond)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	ctx := context.Background()

	for range 2 {
		_, err := s.Next(ctx)
		assert.ErrorIs(t, err, ErrConsumerTimeout)
	}
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, 0), 1))
	m, err := s.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(0), m.Offset)
	_, err = s.Next(ctx)
	assert.ErrorIs(t, err, ErrConsumerTimeout)
}

func TestContextEndsNextButNotTheIterator(t *testing.T) {
	s := newTestStream(t, 2, -1)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)

	ctx, cancel := context.WithCancel(context.Background())
	next := async(func() result {
		m, err := s.Next(ctx)
		return result{msg: m, err: err}
	})
	cancel()
	assert.ErrorIs(t, await(t, next).err, context.Canceled)

	require.NoError(t, pti.Enqueue(context.Background(), newMessages("t", 0, 0, 1), 2))
	_, err := s.Next(ctx)
	assert.ErrorIs(t, err, context.Canceled, "a done context wins even with messages available")
	assert.Equal(t, []int64{0, 1}, nextOffsets(t, s, 2))
}

func TestErrorChunkIsSurfacedThenIterationContinues(t *testing.T) {
	s := newTestStream(t, 4, 0)
	p0 := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	p1 := NewPartitionTopicInfo("t", 1, QueueOf(s), 7, 7, 100)
	ctx := context.Background()
	tooLarge := fmt.Errorf("%w: message at offset 7 is larger than fetch size 100", ErrMessageTooLarge)

	require.NoError(t, p0.Enqueue(ctx, newMessages("t", 0, 0), 1))
	require.NoError(t, p1.EnqueueError(ctx, tooLarge))
	require.NoError(t, p0.Enqueue(ctx, newMessages("t", 0, 1), 2))

	assert.Equal(t, []int64{0}, nextOffsets(t, s, 1))
	_, err := s.Next(ctx)
	var pe *PartitionError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "t", pe.Topic)
	assert.Equal(t, int32(1), pe.Partition)
	assert.ErrorIs(t, err, ErrMessageTooLarge)
	assert.Equal(t, int64(1), p0.ConsumedOffset(), "the error call consumed the previous message")

	assert.Equal(t, []int64{1}, nextOffsets(t, s, 1))
	assert.Equal(t, int64(7), p1.ConsumedOffset())
}

func TestRevokeFencesQueuedChunks(t *testing.T) {
	s := newTestStream(t, 4, 0)
	old := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	other := NewPartitionTopicInfo("t", 1, QueueOf(s), 0, 0, 100)
	ctx := context.Background()
	require.NoError(t, old.Enqueue(ctx, newMessages("t", 0, 0, 1), 2))
	require.NoError(t, old.EnqueueError(ctx, errors.New("stale error")))
	require.NoError(t, other.Enqueue(ctx, newMessages("t", 1, 0), 1))

	old.Revoke()
	m, err := s.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, int32(1), m.Partition)
	_, err = s.Next(ctx)
	assert.ErrorIs(t, err, ErrConsumerTimeout)
	assert.Equal(t, int64(0), old.ConsumedOffset())
}

func TestRevokeFencesCurrentChunk(t *testing.T) {
	s := newTestStream(t, 2, 0)
	old := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	ctx := context.Background()
	require.NoError(t, old.Enqueue(ctx, newMessages("t", 0, 0, 1, 2), 3))

	m, err := s.Next(ctx)
	require.NoError(t, err)
	old.Revoke()
	s.MarkConsumed(m)
	assert.Equal(t, int64(0), old.ConsumedOffset(), "a revoked partition's offset is frozen")

	// The next generation owns the partition from the committed offset.
	fresh := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	require.NoError(t, fresh.Enqueue(ctx, newMessages("t", 0, 0, 1, 2), 3))
	assert.Equal(t, []int64{0, 1, 2}, nextOffsets(t, s, 3))
	_, err = s.Next(ctx)
	assert.ErrorIs(t, err, ErrConsumerTimeout)
	assert.Equal(t, int64(0), old.ConsumedOffset())
	assert.Equal(t, int64(3), fresh.ConsumedOffset())
}

func TestClearDropsQueuedAndCurrentChunks(t *testing.T) {
	s := newTestStream(t, 2, 0)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	ctx := context.Background()
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, 0, 1), 2))
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, 2, 3), 4))

	assert.Equal(t, []int64{0}, nextOffsets(t, s, 1))
	s.clear()
	assert.Equal(t, 0, QueueOf(s).Len())
	_, err := s.Next(ctx)
	assert.ErrorIs(t, err, ErrConsumerTimeout)
	assert.Equal(t, int64(1), pti.ConsumedOffset())

	// Chunks queued after Clear flow again.
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, 4), 5))
	assert.Equal(t, []int64{4}, nextOffsets(t, s, 1))
}

func TestShutdownEndsNext(t *testing.T) {
	s := newTestStream(t, 2, -1)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	ctx := context.Background()

	next := async(func() result {
		m, err := s.Next(ctx)
		return result{msg: m, err: err}
	})
	s.shutdown()
	assert.ErrorIs(t, await(t, next).err, ErrShutdown)
	_, err := s.Next(ctx)
	assert.ErrorIs(t, err, ErrShutdown)
	assert.ErrorIs(t, pti.Enqueue(ctx, newMessages("t", 0, 0), 1), ErrClosed)
	s.shutdown() // idempotent
}

func TestShutdownStopsInTheMiddleOfAChunk(t *testing.T) {
	s := newTestStream(t, 2, -1)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	require.NoError(t, pti.Enqueue(context.Background(), newMessages("t", 0, 0, 1, 2), 3))
	assert.Equal(t, []int64{0}, nextOffsets(t, s, 1))
	s.shutdown()
	_, err := s.Next(context.Background())
	assert.ErrorIs(t, err, ErrShutdown)
	assert.Equal(t, int64(1), pti.ConsumedOffset(), "asking for more still consumes the previous message")
}

func TestIteratorSkipsMalformedChunks(t *testing.T) {
	s := newTestStream(t, 4, 0)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	ctx := context.Background()
	require.NoError(t, QueueOf(s).put(ctx, nil, nil, nil))
	require.NoError(t, QueueOf(s).put(ctx, &FetchedDataChunk{Messages: newMessages("t", 0, 0)}, nil, nil))
	require.NoError(t, QueueOf(s).put(ctx, &FetchedDataChunk{TopicInfo: pti, Messages: []*Message{nil, {Offset: 3}}}, nil, nil))

	m, err := s.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), m.Offset)
	s.MarkConsumed(m) // works for chunks put directly, too
	assert.Equal(t, int64(4), pti.ConsumedOffset())
}

// TestConcurrentRevokeClearShutdown exercises the cross-goroutine calls
// under the race detector while a stream is being drained.
func TestConcurrentRevokeClearShutdown(t *testing.T) {
	s := newTestStream(t, 2, time.Millisecond)
	ctx := context.Background()
	const generations = 20

	fetchDone := make(chan struct{})
	go func() {
		defer close(fetchDone)
		for g := range generations {
			pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
			for i := range int64(5) {
				if err := pti.Enqueue(ctx, newMessages("t", 0, offsetRange(i*10, i*10+10)...), i*10+10); err != nil {
					break
				}
				if i == 2 && g%2 == 0 {
					pti.Revoke()
				}
			}
			pti.Revoke()
			s.clear()
		}
	}()

	iterDone := make(chan struct{})
	go func() {
		defer close(iterDone)
		for {
			m, err := s.Next(ctx)
			if errors.Is(err, ErrShutdown) {
				return
			}
			if err != nil {
				continue
			}
			s.MarkConsumed(m)
		}
	}()
	<-fetchDone
	s.shutdown()
	testwait.WaitFor(t, time.Second, func() bool {
		select {
		case <-iterDone:
			return true
		default:
			return false
		}
	}, "the condition")
}
