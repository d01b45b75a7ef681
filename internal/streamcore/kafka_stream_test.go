package streamcore

import (
	"context"
	"testing"
	"time"
)

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
