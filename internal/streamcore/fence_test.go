package streamcore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testFence is a Fence the test opens and closes.
type testFence struct {
	held    atomic.Bool
	mu      sync.Mutex
	changed chan struct{}
}

func newTestFence(held bool) *testFence {
	f := &testFence{changed: make(chan struct{})}
	f.held.Store(held)
	return f
}

func (f *testFence) Held() bool { return f.held.Load() }

func (f *testFence) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

func (f *testFence) set(held bool) {
	f.held.Store(held)
	f.mu.Lock()
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

// A lapsed fence stops delivery in the middle of a chunk, without losing
// the place: once it holds again, delivery resumes with the next message.
func TestFenceStopsDeliveryAndKeepsThePlace(t *testing.T) {
	s := newTestStream(t, 4, -1)
	f := newTestFence(true)
	info := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	info.SetFence(f)
	require.NoError(t, info.Enqueue(context.Background(), newMessages("t", 0, 0, 1, 2), 3))

	require.Equal(t, []int64{0}, nextOffsets(t, s, 1))
	f.set(false)
	_, err := s.Next(shortCtx(t))
	require.ErrorIs(t, err, context.DeadlineExceeded, "nothing is handed out while the fence is down")
	require.Equal(t, int64(1), info.ConsumedOffset(), "message 0 counts as consumed")

	pending := async(func() result {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m, err := s.Next(ctx)
		return result{msg: m, err: err}
	})
	time.Sleep(20 * time.Millisecond)
	f.set(true)
	r := await(t, pending)
	require.NoError(t, r.err)
	require.Equal(t, int64(1), r.msg.Offset, "no message was skipped")
	require.Equal(t, []int64{2}, nextOffsets(t, s, 1))
}

// Revoking a fenced partition releases the iterator: it drops the
// partition's messages and serves the other partitions.
func TestFenceRevokedPartitionIsDropped(t *testing.T) {
	s := newTestStream(t, 4, -1)
	f := newTestFence(false)
	lost := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	lost.SetFence(f)
	other := NewPartitionTopicInfo("t", 1, QueueOf(s), 0, 0, 1<<20)
	require.NoError(t, lost.Enqueue(context.Background(), newMessages("t", 0, 0, 1), 2))
	require.NoError(t, other.Enqueue(context.Background(), newMessages("t", 1, 5), 6))

	pending := async(func() result {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m, err := s.Next(ctx)
		return result{msg: m, err: err}
	})
	time.Sleep(20 * time.Millisecond)
	lost.Revoke()
	r := await(t, pending)
	require.NoError(t, r.err)
	require.Equal(t, int32(1), r.msg.Partition)
	require.Equal(t, int64(5), r.msg.Offset)
	require.Equal(t, int64(0), lost.ConsumedOffset(), "nothing of the fenced partition was consumed")
}

// The consumer timeout applies while the fence is down, and the iterator
// keeps its place.
func TestFenceHonoursConsumerTimeout(t *testing.T) {
	s := newTestStream(t, 4, 30*time.Millisecond)
	f := newTestFence(false)
	info := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 1<<20)
	info.SetFence(f)
	require.NoError(t, info.Enqueue(context.Background(), newMessages("t", 0, 0), 1))
	_, err := s.Next(context.Background())
	require.ErrorIs(t, err, ErrConsumerTimeout)
	f.set(true)
	require.Equal(t, []int64{0}, nextOffsets(t, s, 1))
}
