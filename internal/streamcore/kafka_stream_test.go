package streamcore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMessagesEndsOnShutdown(t *testing.T) {
	s := newTestStream(t, 2, -1)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	require.NoError(t, pti.Enqueue(context.Background(), newMessages("t", 0, 0, 1, 2), 3))

	got := make(chan int64, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range s.Messages(context.Background()) {
			if assert.NoError(t, err) {
				got <- m.Offset
			}
		}
	}()
	waitFor(t, time.Second, func() bool { return len(got) == 3 })
	s.shutdown()
	<-done
	assert.Equal(t, int64(3), pti.ConsumedOffset())
}

func TestMessagesEndsOnContextDone(t *testing.T) {
	s := newTestStream(t, 2, -1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range s.Messages(ctx) {
			t.Error("nothing was queued")
		}
	}()
	cancel()
	<-done
}

func TestMessagesYieldsRecoverableErrors(t *testing.T) {
	s := newTestStream(t, 2, 0)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	ctx := context.Background()
	require.NoError(t, pti.EnqueueError(ctx, ErrMessageTooLarge))
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, 0), 1))

	var seen []string
	for m, err := range s.Messages(ctx) {
		switch {
		case err == nil:
			seen = append(seen, fmt.Sprint(m.Offset))
		case assert.ErrorIs(t, err, ErrMessageTooLarge):
			seen = append(seen, "too large")
		}
		if len(seen) == 2 {
			break
		}
	}
	assert.Equal(t, []string{"too large", "0"}, seen)

	n := 0
	for m, err := range s.Messages(ctx) {
		assert.Nil(t, m)
		assert.ErrorIs(t, err, ErrConsumerTimeout)
		if n++; n == 3 {
			break
		}
	}
}

func TestMessagesBreakLeavesLastMessageUnconsumed(t *testing.T) {
	s := newTestStream(t, 2, 0)
	pti := NewPartitionTopicInfo("t", 0, QueueOf(s), 0, 0, 100)
	ctx := context.Background()
	require.NoError(t, pti.Enqueue(ctx, newMessages("t", 0, 0, 1, 2, 3), 4))

	for m, err := range s.Messages(ctx) {
		require.NoError(t, err)
		if m.Offset == 1 {
			break
		}
	}
	assert.Equal(t, int64(1), pti.ConsumedOffset(), "message 1 is not consumed by the break")

	// Resuming asks for the next message, which consumes message 1.
	for m, err := range s.Messages(ctx) {
		require.NoError(t, err)
		assert.Equal(t, int64(2), m.Offset)
		assert.Equal(t, int64(2), pti.ConsumedOffset())
		break
	}
}

// TestPollsCountsChunkRequests: Polls grows when the reader needs another
// chunk, not per message.
func TestPollsCountsChunkRequests(t *testing.T) {
	s, _, err := NewKafkaStream(2, 0)
	if err != nil {
		t.Fatal(err)
	}
	q := QueueOf(s)
	info := NewPartitionTopicInfo("t", 0, q, 0, 0, 1024)
	if err := info.Enqueue(context.Background(), []*Message{{Offset: 0}, {Offset: 1}}, 2); err != nil {
		t.Fatal(err)
	}
	if n := s.iter.polls.Load(); n != 0 {
		t.Fatalf("Polls before reading = %d", n)
	}
	for range 2 {
		if _, err := s.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.iter.polls.Load(); n != 1 {
		t.Fatalf("Polls after two messages of one chunk = %d, want 1", n)
	}
	if _, err := s.Next(context.Background()); err != ErrConsumerTimeout {
		t.Fatalf("Next on an empty queue: %v", err)
	}
	if n := s.iter.polls.Load(); n != 2 {
		t.Fatalf("Polls after asking for another chunk = %d, want 2", n)
	}
	if s.iter.waiting.Load() {
		t.Fatal("Waiting while nobody is in Next")
	}
	blocking, _, err := NewKafkaStream(2, -1)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = blocking.Next(context.Background())
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !blocking.iter.waiting.Load() {
		if time.Now().After(deadline) {
			t.Fatal("Waiting never set while Next blocks")
		}
		time.Sleep(time.Millisecond)
	}
	blocking.shutdown()
	<-done
	if blocking.iter.waiting.Load() {
		t.Fatal("Waiting after Next returned")
	}
}
