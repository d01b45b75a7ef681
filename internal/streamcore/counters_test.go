package streamcore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Messages are counted when the iterator leaves a chunk, bytes when a chunk
// is enqueued; partitions of one topic share their Counters.
func TestCountersCountPerChunk(t *testing.T) {
	s := newTestStream(t, 4, 0)
	var c Counters
	p0 := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	p1 := NewPartitionTopicInfo("t", 1, QueueOf(s), 0, 0, 1<<20)
	p0.SetCounters(&c)
	p1.SetCounters(&c)
	ctx := context.Background()
	require.NoError(t, p0.Enqueue(ctx, newMessages("t", 0, 0, 1, 2), 3))
	require.NoError(t, p1.Enqueue(ctx, newMessages("t", 1, 0, 1), 2))
	require.Equal(t, int64(5), c.Bytes(), "one value byte per message, counted on enqueue")
	require.Zero(t, c.Messages())

	require.Equal(t, []int64{0, 1}, nextOffsets(t, s, 2))
	require.Zero(t, c.Messages(), "the chunk being read is not counted yet")
	require.Equal(t, []int64{2, 0}, nextOffsets(t, s, 2))
	require.Equal(t, int64(3), c.Messages(), "the first chunk is counted once left")
	require.Equal(t, []int64{1}, nextOffsets(t, s, 1))
	_, err := s.Next(ctx)
	require.ErrorIs(t, err, ErrConsumerTimeout)
	require.Equal(t, int64(5), c.Messages())
}

// Messages skipped below the consumed offset, and those of a revoked
// partition, are not counted; those handed out before the revocation are.
func TestCountersSkipAndRevoke(t *testing.T) {
	s := newTestStream(t, 4, 0)
	var c Counters
	p := NewPartitionTopicInfo("t", 0, QueueOf(s), 2, 0, 1<<20)
	p.SetCounters(&c)
	require.NoError(t, p.Enqueue(context.Background(), newMessages("t", 0, offsetRange(0, 6)...), 6))
	require.Equal(t, []int64{2, 3}, nextOffsets(t, s, 2))
	p.Revoke()
	_, err := s.Next(context.Background())
	require.ErrorIs(t, err, ErrConsumerTimeout)
	require.Equal(t, int64(2), c.Messages())
}

// Shutdown counts the messages of the chunk being read.
func TestCountersShutdown(t *testing.T) {
	s := newTestStream(t, 4, 0)
	var c Counters
	p := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	p.SetCounters(&c)
	require.NoError(t, p.Enqueue(context.Background(), newMessages("t", 0, 0, 1, 2), 3))
	require.Equal(t, []int64{0}, nextOffsets(t, s, 1))
	s.shutdown()
	_, err := s.Next(context.Background())
	require.ErrorIs(t, err, ErrShutdown)
	require.Equal(t, int64(1), c.Messages())
}

// The time an iterator waits on a lapsed fence is counted.
func TestCountersFencedTime(t *testing.T) {
	s := newTestStream(t, 4, -1)
	var c Counters
	f := newTestFence(false)
	p := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	p.SetFence(f)
	p.SetCounters(&c)
	require.NoError(t, p.Enqueue(context.Background(), newMessages("t", 0, 0), 1))
	pending := async(func() result {
		m, err := s.Next(context.Background())
		return result{msg: m, err: err}
	})
	time.Sleep(30 * time.Millisecond)
	f.set(true)
	r := await(t, pending)
	require.NoError(t, r.err)
	require.GreaterOrEqual(t, c.FencedTime(), 30*time.Millisecond)
}

// Lag is the high watermark minus the consumed offset, unknown until both
// are known.
func TestLag(t *testing.T) {
	s := newTestStream(t, 4, 0)
	p := NewPartitionTopicInfo("t", 0, QueueOf(s), -1, -1, 1<<20)
	_, ok := p.Lag()
	require.False(t, ok)
	require.Equal(t, int64(-1), p.HighWatermark())
	p.SetHighWatermark(10)
	_, ok = p.Lag()
	require.False(t, ok, "no consumed offset yet")
	p.ResetConsumeOffset(4)
	lag, ok := p.Lag()
	require.True(t, ok)
	require.Equal(t, int64(6), lag)
	p.ResetConsumeOffset(12)
	lag, _ = p.Lag()
	require.Zero(t, lag, "never negative")
	p.SetHighWatermark(0)
	require.Equal(t, int64(0), p.HighWatermark())
}
