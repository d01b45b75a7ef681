package streamcore

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// releases counts the calls of the release functions it hands out, one
// counter per chunk.
type releases struct{ n []*atomic.Int32 }

func (r *releases) fn() func() {
	c := new(atomic.Int32)
	r.n = append(r.n, c)
	return func() { c.Add(1) }
}

// counts returns how often each chunk's release was called, in order.
func (r *releases) counts() []int32 {
	out := make([]int32, len(r.n))
	for i, c := range r.n {
		out[i] = c.Load()
	}
	return out
}

// TestReleaseWhenTheIteratorMovesOn: a chunk's release is called once, in
// the call to Next that follows the one returning its last message: not
// while that message may still be in use.
func TestReleaseWhenTheIteratorMovesOn(t *testing.T) {
	ctx := context.Background()
	s := newTestStream(t, 4, 50*time.Millisecond)
	p := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	var r releases
	require.NoError(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 0, 1), 2, r.fn()))
	require.NoError(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 2), 3, r.fn()))
	require.Equal(t, []int64{0, 1}, nextOffsets(t, s, 2))
	require.Equal(t, []int32{0, 0}, r.counts(), "the last message of the first chunk is in use")
	require.Equal(t, []int64{2}, nextOffsets(t, s, 1))
	require.Equal(t, []int32{1, 0}, r.counts())
	_, err := s.Next(ctx)
	require.ErrorIs(t, err, ErrConsumerTimeout)
	require.Equal(t, []int32{1, 1}, r.counts())
}

// TestReleaseOnEveryDropPath: chunks dropped instead of consumed are
// released once each: queued ones when the stream is cleared or shut down,
// the one being read in the next call to Next, those of a revoked or
// paused partition when the iterator reaches them, and a chunk that is not
// queued (Enqueue fails, or has no message) before Enqueue returns.
func TestReleaseOnEveryDropPath(t *testing.T) {
	ctx := context.Background()
	t.Run("clear", func(t *testing.T) {
		s, ctl, err := NewKafkaStream(4, 50*time.Millisecond)
		require.NoError(t, err)
		defer ctl.Shutdown()
		p := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
		var r releases
		require.NoError(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 0, 1), 2, r.fn()))
		require.NoError(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 2), 3, r.fn()))
		require.Equal(t, []int64{0}, nextOffsets(t, s, 1))
		ctl.Clear()
		require.Equal(t, []int32{0, 1}, r.counts(), "the queued chunk is released by Clear")
		_, err = s.Next(ctx)
		require.ErrorIs(t, err, ErrConsumerTimeout)
		require.Equal(t, []int32{1, 1}, r.counts(), "the chunk being read is released by the next Next")
	})
	t.Run("shutdown", func(t *testing.T) {
		s, ctl, err := NewKafkaStream(4, time.Second)
		require.NoError(t, err)
		p := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
		q := NewPartitionTopicInfo("t", 1, QueueOf(s), 0, 0, 1<<20)
		var r releases
		require.NoError(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 0, 1), 2, r.fn()))
		require.NoError(t, q.EnqueueFrom(ctx, q.FetchedOffset(), newMessages("t", 1, 0), 1, r.fn()))
		require.NoError(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 2, 3), 4, r.fn()))
		require.NoError(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 4), 5, r.fn()))
		require.Equal(t, []int64{0}, nextOffsets(t, s, 1))
		q.Pause()
		// The first chunk is done with on the way to offset 2; q's chunk
		// is dropped.
		require.Equal(t, []int64{1, 2}, nextOffsets(t, s, 2))
		require.Equal(t, []int32{1, 1, 0, 0}, r.counts())
		ctl.Shutdown()
		require.Equal(t, []int32{1, 1, 0, 1}, r.counts(), "the queued chunk is released by Shutdown")
		_, err = s.Next(ctx)
		require.ErrorIs(t, err, ErrShutdown)
		require.Equal(t, []int32{1, 1, 1, 1}, r.counts(), "the chunk being read, by the next Next")
	})
	t.Run("revoke", func(t *testing.T) {
		s := newTestStream(t, 4, 50*time.Millisecond)
		p := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
		var r releases
		require.NoError(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 0, 1), 2, r.fn()))
		require.NoError(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 2), 3, r.fn()))
		require.Equal(t, []int64{0}, nextOffsets(t, s, 1))
		p.Revoke()
		_, err := s.Next(ctx)
		require.ErrorIs(t, err, ErrConsumerTimeout)
		require.Equal(t, []int32{1, 1}, r.counts())
	})
	t.Run("paused", func(t *testing.T) {
		s := newTestStream(t, 4, 50*time.Millisecond)
		p := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
		var r releases
		require.NoError(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 0, 1), 2, r.fn()))
		require.NoError(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 2), 3, r.fn()))
		require.Equal(t, []int64{0}, nextOffsets(t, s, 1))
		p.Pause()
		_, err := s.Next(ctx)
		require.ErrorIs(t, err, ErrConsumerTimeout)
		require.Equal(t, []int32{1, 1}, r.counts(), "nothing of a paused partition is kept")
		p.Resume()
		require.NoError(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 1, 2), 3, r.fn()))
		require.Equal(t, []int64{1, 2}, nextOffsets(t, s, 2))
		_, err = s.Next(ctx)
		require.ErrorIs(t, err, ErrConsumerTimeout)
		require.Equal(t, []int32{1, 1, 1}, r.counts())
	})
	t.Run("not queued", func(t *testing.T) {
		s := newTestStream(t, 1, time.Second)
		p := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
		var r releases
		require.NoError(t, p.EnqueueFrom(ctx, p.FetchedOffset(), nil, 5, r.fn()))                          // nothing to queue
		require.NoError(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 5), 6, r.fn()))       // queued
		require.Error(t, p.EnqueueFrom(shortCtx(t), p.FetchedOffset(), newMessages("t", 0, 6), 7, r.fn())) // full: the context ends
		p.Pause()
		require.ErrorIs(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 6), 7, r.fn()), ErrPaused)
		p.Revoke()
		require.ErrorIs(t, p.EnqueueFrom(ctx, p.FetchedOffset(), newMessages("t", 0, 6), 7, r.fn()), ErrClosed)
		require.Equal(t, []int32{1, 0, 1, 1, 1}, r.counts())
	})
}

// TestCloneOutlivesItsMessage: a clone holds its own copy of the key, the
// value and the headers, and marking it consumed moves its partition as
// marking the original would.
func TestCloneOutlivesItsMessage(t *testing.T) {
	ctx := context.Background()
	s := newTestStream(t, 2, time.Second)
	p := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	buf := []byte("keyvaluehkhv")
	m := &Message{Topic: "t", Offset: 0, Key: buf[0:3], Value: buf[3:8], Headers: []Header{{Key: buf[8:10], Value: buf[10:12]}, {Key: buf[8:9]}}}
	require.NoError(t, p.Enqueue(ctx, []*Message{m}, 1))
	got, err := s.Next(ctx)
	require.NoError(t, err)
	c := got.Clone()
	for i := range buf {
		buf[i] = 0xdb
	}
	require.Equal(t, "key", string(c.Key))
	require.Equal(t, "value", string(c.Value))
	require.Equal(t, []Header{{Key: []byte("hk"), Value: []byte("hv")}, {Key: []byte("h")}}, c.Headers)
	require.Nil(t, c.Headers[1].Value)
	require.Equal(t, int64(0), p.ConsumedOffset())
	s.MarkConsumed(c)
	require.Equal(t, int64(1), p.ConsumedOffset())
	require.Nil(t, (*Message)(nil).Clone())
	require.Nil(t, (&Message{}).Clone().Key)
}
