package streamcore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPausedPartitionRefusesEnqueue(t *testing.T) {
	s := newTestStream(t, 2, -1)
	p := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	p.Pause()
	p.Pause() // idempotent
	assert.True(t, p.Paused())
	ctx := context.Background()
	assert.ErrorIs(t, p.Enqueue(ctx, newMessages("t", 0, 0, 1), 2), ErrPaused)
	assert.ErrorIs(t, p.EnqueueError(ctx, ErrMessageTooLarge), ErrPaused)
	assert.Equal(t, int64(0), p.FetchedOffset(), "a refused chunk does not move the fetched offset")
	assert.Equal(t, 0, QueueOf(s).Len())

	p.Resume()
	p.Resume() // idempotent
	assert.False(t, p.Paused())
	require.NoError(t, p.Enqueue(ctx, newMessages("t", 0, 0, 1), 2))
	assert.Equal(t, []int64{0, 1}, nextOffsets(t, s, 2))
}

// A fetcher blocked on a full queue is released by a pause of its
// partition, so that it can serve its other partitions.
func TestPauseReleasesBlockedEnqueue(t *testing.T) {
	s := newTestStream(t, 1, -1)
	p := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	ctx := context.Background()
	require.NoError(t, p.Enqueue(ctx, newMessages("t", 0, 0), 1))
	blocked := async(func() result { return result{err: p.Enqueue(ctx, newMessages("t", 0, 1), 2)} })
	select {
	case r := <-blocked:
		t.Fatalf("Enqueue on a full queue returned %v", r.err)
	case <-time.After(20 * time.Millisecond):
	}
	p.Pause()
	assert.ErrorIs(t, await(t, blocked).err, ErrPaused)
	assert.Equal(t, int64(1), p.FetchedOffset(), "the refused chunk will be fetched again")
}

// The chunks of a paused partition are set aside while the others flow;
// after Resume they come out first, in order, then the partition's newer
// chunks: nothing is lost, repeated or reordered.
func TestPauseSetsQueuedChunksAside(t *testing.T) {
	s := newTestStream(t, 8, 0)
	ctx := context.Background()
	a := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	b := NewPartitionTopicInfo("t", 1, QueueOf(s), 0, 0, 1<<20)
	require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 0, 1), 2))
	require.NoError(t, b.Enqueue(ctx, newMessages("t", 1, 0, 1), 2))
	require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 2, 3), 4))
	require.NoError(t, b.Enqueue(ctx, newMessages("t", 1, 2), 3))

	m, err := s.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, int32(0), m.Partition)
	assert.Equal(t, int64(0), m.Offset)
	a.Pause() // in the middle of a's first chunk

	var got []string
	for {
		m, err := s.Next(ctx)
		if err == ErrConsumerTimeout {
			break
		}
		require.NoError(t, err)
		got = append(got, m.Topic+"-"+string(rune('0'+m.Partition))+"@"+string(rune('0'+m.Offset)))
	}
	assert.Equal(t, []string{"t-1@0", "t-1@1", "t-1@2"}, got, "only b flows while a is paused")
	assert.Equal(t, int64(1), a.ConsumedOffset(), "the message handed out before the pause is consumed")
	assert.Equal(t, int64(4), a.FetchedOffset())

	a.Resume()
	require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 4), 5))
	assert.Equal(t, []int64{1, 2, 3, 4}, nextOffsets(t, s, 4))
	_, err = s.Next(ctx)
	assert.ErrorIs(t, err, ErrConsumerTimeout)
	assert.Equal(t, int64(5), a.ConsumedOffset())
}

// A chunk that reaches the iterator after Resume but behind chunks set
// aside waits its turn.
func TestResumedPartitionKeepsOrder(t *testing.T) {
	s := newTestStream(t, 8, 0)
	ctx := context.Background()
	a := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	b := NewPartitionTopicInfo("t", 1, QueueOf(s), 0, 0, 1<<20)
	a.Pause()
	// Queued just before the pause took effect (Enqueue raced it).
	require.NoError(t, QueueOf(s).put(ctx, &FetchedDataChunk{TopicInfo: a, Messages: newMessages("t", 0, 0), FetchOffset: 0, NextOffset: 1}, nil, nil))
	require.NoError(t, b.Enqueue(ctx, newMessages("t", 1, 0), 1))
	assert.Equal(t, []int64{0}, nextOffsets(t, s, 1), "b's message")
	a.Resume()
	a.ResetFetchOffset(1)
	require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 1), 2))
	assert.Equal(t, []int64{0, 1}, nextOffsets(t, s, 2))
}

func TestResumeWakesBlockedNext(t *testing.T) {
	s := newTestStream(t, 2, -1)
	ctx := context.Background()
	a := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 0), 1))
	a.Pause()
	next := async(func() result { m, err := s.Next(ctx); return result{msg: m, err: err} })
	waitFor(t, time.Second, func() bool { return s.iter.waiting.Load() && QueueOf(s).Len() == 0 })
	a.Resume()
	r := await(t, next)
	require.NoError(t, r.err)
	assert.Equal(t, int64(0), r.msg.Offset)
}

// A rebalance's Clear, or the revocation of the partition, drops what was
// set aside.
func TestClearAndRevokeDropParkedChunks(t *testing.T) {
	for _, name := range []string{"clear", "revoke"} {
		t.Run(name, func(t *testing.T) {
			s := newTestStream(t, 4, 0)
			ctx := context.Background()
			a := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
			require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 0, 1), 2))
			a.Pause()
			_, err := s.Next(ctx)
			require.ErrorIs(t, err, ErrConsumerTimeout)
			require.Len(t, s.iter.parked, 1)
			if name == "clear" {
				s.clear()
			} else {
				a.Revoke()
			}
			a.Resume()
			_, err = s.Next(ctx)
			assert.ErrorIs(t, err, ErrConsumerTimeout)
			assert.Empty(t, s.iter.parked)
			assert.Equal(t, int64(0), a.ConsumedOffset())
		})
	}
}

// A reader waiting for a partition's fence lets go of the partition when it
// is paused, and serves the others.
func TestPauseWhileFenced(t *testing.T) {
	s := newTestStream(t, 4, -1)
	ctx := context.Background()
	f := newTestFence(false)
	a := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	a.SetFence(f)
	b := NewPartitionTopicInfo("t", 1, QueueOf(s), 0, 0, 1<<20)
	require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 0), 1))
	require.NoError(t, b.Enqueue(ctx, newMessages("t", 1, 5), 6))
	next := async(func() result { m, err := s.Next(ctx); return result{msg: m, err: err} })
	waitFor(t, time.Second, s.iter.waiting.Load)
	a.Pause()
	r := await(t, next)
	require.NoError(t, r.err)
	assert.Equal(t, int64(5), r.msg.Offset, "b flows while a is paused behind its fence")
	f.set(true)
	a.Resume()
	assert.Equal(t, []int64{0}, nextOffsets(t, s, 1))
}

// Pause, Resume, Enqueue and Next from different goroutines: every message
// comes out once, in order per partition. Repeated: the interleavings that
// once reordered a partition (a chunk set aside again behind its newer
// chunks) are rare.
func TestPauseResumeConcurrent(t *testing.T) {
	for range 150 {
		pauseResumeConcurrently(t)
		if t.Failed() {
			return
		}
	}
}

func pauseResumeConcurrently(t *testing.T) {
	s := newTestStream(t, 2, -1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const n = 2000
	parts := []*PartitionTopicInfo{
		NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20),
		NewPartitionTopicInfo("t", 1, QueueOf(s), 0, 0, 1<<20),
	}
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Go(func() { // a fetcher: refused chunks are fetched again
			for off := p.FetchedOffset(); off < n; off = p.FetchedOffset() {
				err := p.Enqueue(ctx, newMessages("t", p.Partition, off, off+1), off+2)
				if err == ErrPaused {
					time.Sleep(10 * time.Microsecond)
					continue
				}
				if !assert.NoError(t, err) {
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				parts[0].Resume()
				parts[1].Resume()
				return
			default:
			}
			p := parts[i%2]
			p.Pause()
			time.Sleep(50 * time.Microsecond)
			p.Resume()
		}
	})
	next := [2]int64{}
	for next[0] < n || next[1] < n {
		m, err := s.Next(ctx)
		require.NoError(t, err)
		require.Equal(t, next[m.Partition], m.Offset, "partition %d", m.Partition)
		next[m.Partition]++
	}
	close(stop)
	wg.Wait()
}
