package streamcore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// shortCtx returns a context that ends soon: for asserting that a call
// blocks, by watching it give up.
func shortCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

// newMessages returns messages of topic/partition at the given offsets.
func newMessages(topic string, partition int32, offsets ...int64) []*Message {
	out := make([]*Message, len(offsets))
	for i, o := range offsets {
		out[i] = &Message{Topic: topic, Partition: partition, Offset: o, Value: []byte{byte(o)}}
	}
	return out
}

// offsetRange returns the offsets from, from+1, ..., to-1.
func offsetRange(from, to int64) []int64 {
	out := make([]int64, 0, to-from)
	for o := from; o < to; o++ {
		out = append(out, o)
	}
	return out
}

func newTestStream(t testing.TB, capacity int, timeout time.Duration) *KafkaStream {
	t.Helper()
	s, _, err := NewKafkaStream(capacity, timeout)
	require.NoError(t, err)
	t.Cleanup(s.shutdown)
	return s
}

func newTestQueue(t testing.TB, capacity int) *ChunkQueue {
	t.Helper()
	q, err := newChunkQueue(capacity)
	require.NoError(t, err)
	t.Cleanup(q.close)
	return q
}

// result is the outcome of a call run in a goroutine.
type result struct {
	msg   *Message
	chunk *FetchedDataChunk
	err   error
}

// async runs f in a goroutine and returns a channel with its outcome.
func async(f func() result) <-chan result {
	ch := make(chan result, 1)
	go func() { ch <- f() }()
	return ch
}

// await returns the outcome of an async call, failing after a second.
func await(t testing.TB, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(time.Second):
		t.Fatal("call did not return")
		return result{}
	}
}

// nextOffsets calls Next n times and returns the offsets handed out.
func nextOffsets(t testing.TB, s *KafkaStream, n int) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	out := make([]int64, 0, n)
	for range n {
		m, err := s.Next(ctx)
		require.NoError(t, err)
		out = append(out, m.Offset)
	}
	return out
}
