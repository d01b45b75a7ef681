package streamcore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
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

// The chunks of a paused partition are dropped while the others flow, and
// its fetched offset moves back to where the stream stands in it; after
// Resume the fetcher fetches them again: nothing is lost, repeated or
// reordered.
func TestPauseDropsQueuedChunks(t *testing.T) {
	s := newTestStream(t, 8, 0)
	ctx := context.Background()
	a := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	b := NewPartitionTopicInfo("t", 1, QueueOf(s), 0, 0, 1<<20)
	var r releases
	require.NoError(t, a.EnqueueFrom(ctx, 0, newMessages("t", 0, 0, 1), 2, r.fn()))
	require.NoError(t, b.Enqueue(ctx, newMessages("t", 1, 0, 1), 2))
	require.NoError(t, a.EnqueueFrom(ctx, 2, newMessages("t", 0, 2, 3), 4, r.fn()))
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
	assert.Equal(t, []int32{1, 1}, r.counts(), "a's chunks are dropped")
	assert.Empty(t, s.iter.parked)
	assert.Equal(t, int64(1), a.ConsumedOffset(), "the message handed out before the pause is consumed")
	assert.Equal(t, int64(1), a.FetchedOffset(), "a is to be fetched again after its last message handed out")
	assert.ErrorIs(t, a.EnqueueFrom(ctx, 4, newMessages("t", 0, 4), 5, nil), ErrPaused)

	a.Resume()
	assert.ErrorIs(t, a.EnqueueFrom(ctx, 4, newMessages("t", 0, 4), 5, nil), ErrMoved, "a fetch made before the drop")
	require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 1, 2, 3, 4), 5))
	assert.Equal(t, []int64{1, 2, 3, 4}, nextOffsets(t, s, 4))
	_, err = s.Next(ctx)
	assert.ErrorIs(t, err, ErrConsumerTimeout)
	assert.Equal(t, int64(5), a.ConsumedOffset())
}

// A chunk that was queued as the pause came (its Enqueue raced the pause)
// is dropped too, and fetched again after Resume.
func TestChunkQueuedAsThePauseCameIsFetchedAgain(t *testing.T) {
	s := newTestStream(t, 8, 0)
	ctx := context.Background()
	a := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	b := NewPartitionTopicInfo("t", 1, QueueOf(s), 0, 0, 1<<20)
	a.Pause()
	require.NoError(t, QueueOf(s).put(ctx, &FetchedDataChunk{TopicInfo: a, Messages: newMessages("t", 0, 0), FetchOffset: 0, NextOffset: 1}, nil, nil))
	a.ResetFetchOffset(1)
	require.NoError(t, b.Enqueue(ctx, newMessages("t", 1, 0), 1))
	assert.Equal(t, []int64{0}, nextOffsets(t, s, 1), "b's message")
	assert.Equal(t, int64(0), a.FetchedOffset())
	a.Resume()
	require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 0, 1), 2))
	assert.Equal(t, []int64{0, 1}, nextOffsets(t, s, 2))
}

// A fetch made at the old offset, or queued while the stream moved the
// offset back, never reaches the application and does not move the
// fetched offset.
func TestFetchFromBeforeTheDropIsRefused(t *testing.T) {
	s := newTestStream(t, 1, 0)
	ctx := context.Background()
	a := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 0, 1), 2))
	// Blocked on the full queue while the stream drops a's chunk.
	var r releases
	blocked := async(func() result { return result{err: a.EnqueueFrom(ctx, 2, newMessages("t", 0, 2, 3), 4, r.fn())} })
	testwait.WaitFor(t, time.Second, func() bool { return a.FetchedOffset() == 2 }, "the condition")
	a.Pause()
	assert.ErrorIs(t, await(t, blocked).err, ErrPaused)
	_, err := s.Next(ctx)
	require.ErrorIs(t, err, ErrConsumerTimeout)
	assert.Equal(t, int64(0), a.FetchedOffset())
	a.Resume()
	assert.ErrorIs(t, a.EnqueueFrom(ctx, 2, newMessages("t", 0, 2, 3), 4, r.fn()), ErrMoved)
	assert.Equal(t, []int32{1, 1}, r.counts(), "refused chunks are released")
	assert.False(t, a.ResetFetchOffsetFrom(2, 100), "an offset reset resolved from the old offset")
	assert.Equal(t, int64(0), a.FetchedOffset())

	// Queued in the old epoch after the check (the fetcher was past
	// admit when the stream moved the offset back): dropped, the fetched
	// offset stays.
	require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 0, 1), 2))
	a.Pause()
	_, err = s.Next(ctx)
	require.ErrorIs(t, err, ErrConsumerTimeout)
	stale := &FetchedDataChunk{TopicInfo: a, Messages: newMessages("t", 0, 2, 3), FetchOffset: 2, NextOffset: 4, epoch: a.epoch.Load() - 1}
	require.NoError(t, QueueOf(s).put(ctx, stale, nil, nil))
	a.Resume()
	_, err = s.Next(ctx)
	require.ErrorIs(t, err, ErrConsumerTimeout)
	require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 0, 1), 2))
	assert.Equal(t, []int64{0, 1}, nextOffsets(t, s, 2))
	_, err = s.Next(ctx)
	assert.ErrorIs(t, err, ErrConsumerTimeout)
}

// An error chunk of a paused partition is kept aside, and comes after
// Resume; Resume wakes a Next that waits.
func TestResumeWakesBlockedNext(t *testing.T) {
	s := newTestStream(t, 2, -1)
	ctx := context.Background()
	a := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	require.NoError(t, a.EnqueueStop(ctx, 0, ErrMessageTooLarge))
	assert.True(t, a.Stopped())
	a.Pause()
	next := async(func() result { m, err := s.Next(ctx); return result{msg: m, err: err} })
	testwait.WaitFor(t, time.Second, func() bool { return s.iter.waiting.Load() && QueueOf(s).Len() == 0 }, "the condition")
	require.Len(t, s.iter.parked, 1)
	a.Resume()
	r := await(t, next)
	assert.ErrorIs(t, r.err, ErrMessageTooLarge)
	assert.True(t, a.Stopped(), "nothing was dropped: the fetcher stays stopped")
}

// A partition a fetcher stopped at an error is to be fetched again when a
// pause drops the chunks before the error: the error comes again after
// them.
func TestStoppedPartitionMovedBackIsFetchedAgain(t *testing.T) {
	s := newTestStream(t, 4, 0)
	ctx := context.Background()
	a := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 0, 1), 2))
	require.NoError(t, a.EnqueueStop(ctx, 2, ErrMessageTooLarge))
	assert.True(t, a.Stopped())
	a.Pause()
	_, err := s.Next(ctx)
	require.ErrorIs(t, err, ErrConsumerTimeout)
	assert.False(t, a.Stopped())
	assert.Equal(t, int64(0), a.FetchedOffset())
	a.Resume()
	_, err = s.Next(ctx)
	require.ErrorIs(t, err, ErrConsumerTimeout, "the error went with the chunk before it")
	require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 0, 1), 2))
	require.NoError(t, a.EnqueueStop(ctx, 2, ErrMessageTooLarge))
	assert.Equal(t, []int64{0, 1}, nextOffsets(t, s, 2))
	_, err = s.Next(ctx)
	assert.ErrorIs(t, err, ErrMessageTooLarge)
}

// A rebalance's Clear, or the revocation of the partition, drops what was
// set aside.
func TestClearAndRevokeDropParkedChunks(t *testing.T) {
	for _, name := range []string{"clear", "revoke"} {
		t.Run(name, func(t *testing.T) {
			s := newTestStream(t, 4, 0)
			ctx := context.Background()
			a := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
			require.NoError(t, a.EnqueueError(ctx, ErrMessageTooLarge))
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
		})
	}
}

// Pause/Resume backpressure, many cycles, against a fetcher that fills the
// queue whenever the partition may be fetched: the chunks alive (queued,
// being read, or being queued) never exceed what the queue and the reader
// hold, queued.max.message.chunks + 2. Setting the chunks of a paused
// partition aside let them grow by the queue's capacity every cycle.
func TestPauseCyclesKeepChunksBounded(t *testing.T) {
	const queued, cycles, per = 2, 50, 4
	s := newTestStream(t, queued, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	var live, maxLive atomic.Int64
	note := func() {
		for n := live.Load(); n > maxLive.Load(); {
			if maxLive.CompareAndSwap(maxLive.Load(), n) {
				break
			}
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(stop)
		cancel()
		wg.Wait()
	}()
	wg.Go(func() { // the fetcher
		for {
			select {
			case <-stop:
				return
			default:
			}
			from := a.FetchedOffset()
			offs := make([]int64, per)
			for i := range offs {
				offs[i] = from + int64(i)
			}
			live.Add(1)
			note()
			err := a.EnqueueFrom(ctx, from, newMessages("t", 0, offs...), from+per, func() { live.Add(-1) })
			if err != nil {
				time.Sleep(100 * time.Microsecond)
			}
		}
	})
	var want int64
	for range cycles {
		testwait.WaitFor(t, time.Second, func() bool { return QueueOf(s).Len() == queued }, "the condition")
		for range per / 2 {
			m, err := s.Next(ctx)
			require.NoError(t, err)
			require.Equal(t, want, m.Offset)
			want++
		}
		a.Pause()
		_, err := s.Next(ctx) // sees the paused partition's chunks
		require.ErrorIs(t, err, ErrConsumerTimeout)
		note()
		a.Resume()
	}
	t.Logf("%d cycles: at most %d chunks alive", cycles, maxLive.Load())
	assert.LessOrEqual(t, maxLive.Load(), int64(queued+2), "queued, being read, being queued")
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
	testwait.WaitFor(t, time.Second, s.iter.waiting.Load, "the condition")
	a.Pause()
	r := await(t, next)
	require.NoError(t, r.err)
	assert.Equal(t, int64(5), r.msg.Offset, "b flows while a is paused behind its fence")
	f.set(true)
	a.Resume()
	assert.Equal(t, int64(0), a.FetchedOffset(), "a's chunk was dropped")
	require.NoError(t, a.Enqueue(ctx, newMessages("t", 0, 0), 1))
	assert.Equal(t, []int64{0}, nextOffsets(t, s, 1))
}

// Pause, Resume, Enqueue and Next from different goroutines: every message
// comes out once, in order per partition, though paused partitions' chunks
// are dropped and fetched again. Repeated: the interleavings that race a
// fetch with a drop are rare.
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
		wg.Go(func() { // a fetcher: refused chunks are fetched again, from where the partition is
			for ctx.Err() == nil {
				off := p.FetchedOffset()
				if off >= n {
					time.Sleep(10 * time.Microsecond) // a pause may move it back
					continue
				}
				err := p.EnqueueFrom(ctx, off, newMessages("t", p.Partition, off, off+1), off+2, nil)
				if err == ErrPaused || err == ErrMoved {
					time.Sleep(10 * time.Microsecond)
					continue
				}
				if ctx.Err() == nil && !assert.NoError(t, err) {
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
	cancel()
	wg.Wait()
}
