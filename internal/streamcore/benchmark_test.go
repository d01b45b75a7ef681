package streamcore

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkIterator measures messages per second from Enqueue to Next: one
// fetcher goroutine enqueues chunks of 1000 messages of 100 bytes, the
// benchmark goroutine takes them one by one. One op is one message.
//
// fence=lease runs it with a Fence that does what the connector's session
// fence does per message (zkutil's lease check: an atomic load and a read
// of the monotonic clock), to show the cost of fencing on the hot path.
func BenchmarkIterator(b *testing.B) {
	b.Run("fence=none", func(b *testing.B) { benchmarkIterator(b, nil, nil) })
	b.Run("fence=lease", func(b *testing.B) { benchmarkIterator(b, newClockFence(), nil) })
}

// BenchmarkIteratorMetrics is BenchmarkIterator with the lease fence, as
// the connector runs it, without and with Counters (what the connector
// sets when Config.Metrics is set), to show the cost of metrics on the
// message path.
func BenchmarkIteratorMetrics(b *testing.B) {
	b.Run("metrics=off", func(b *testing.B) { benchmarkIterator(b, newClockFence(), nil) })
	b.Run("metrics=on", func(b *testing.B) { benchmarkIterator(b, newClockFence(), new(Counters)) })
}

// clockFence holds until a deadline on the monotonic clock, as zkutil's
// lease does.
type clockFence struct {
	base  time.Time
	until atomic.Pointer[time.Duration]
	ch    chan struct{}
}

func newClockFence() *clockFence {
	f := &clockFence{base: time.Now(), ch: make(chan struct{})}
	d := time.Hour
	f.until.Store(&d)
	return f
}

func (f *clockFence) Held() bool               { return time.Since(f.base) < *f.until.Load() }
func (f *clockFence) Changed() <-chan struct{} { return f.ch }

func benchmarkIterator(b *testing.B, fence Fence, counters *Counters) {
	const chunkSize = 1000
	const slots = 8 // chunk buffers recycled between the two goroutines

	s, _, err := NewKafkaStream(2, -1)
	if err != nil {
		b.Fatal(err)
	}
	pti := NewPartitionTopicInfo("bench", 0, QueueOf(s), 0, 0, 1<<20)
	if fence != nil {
		pti.SetFence(fence)
	}
	pti.SetCounters(counters)
	value := make([]byte, 100)

	free := make(chan []*Message, slots)
	for range slots {
		msgs := make([]*Message, chunkSize)
		for i := range msgs {
			msgs[i] = &Message{Topic: "bench", Value: value}
		}
		free <- msgs
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fetchDone := make(chan struct{})
	go func() {
		defer close(fetchDone)
		var next int64
		for {
			var msgs []*Message
			select {
			case msgs = <-free:
			case <-ctx.Done():
				return
			}
			for i, m := range msgs {
				m.Offset = next + int64(i)
			}
			next += chunkSize
			if pti.Enqueue(ctx, msgs, next) != nil {
				return
			}
		}
	}()

	// pending holds the chunk being read, recycled when the iterator has
	// moved past it (the next chunk's first message has been handed out).
	var pending []*Message
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		m, err := s.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if m.Offset != int64(i) {
			b.Fatalf("got offset %d, want %d", m.Offset, i)
		}
		if m.Offset%chunkSize == 0 {
			if pending != nil {
				free <- pending
			}
			pending = nil
		}
		if pending == nil {
			pending = currentChunk(s)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	if counters != nil && counters.Messages() < int64(b.N)-chunkSize {
		b.Fatalf("counted %d messages of %d", counters.Messages(), b.N)
	}
	cancel()
	s.shutdown()
	<-fetchDone
}

// currentChunk returns the messages of the chunk the iterator is reading.
func currentChunk(s *KafkaStream) []*Message { return s.iter.chunk.Messages }

// BenchmarkChunkQueue measures one Put and one Take through a queue shared
// by two goroutines.
func BenchmarkChunkQueue(b *testing.B) {
	q, err := newChunkQueue(2)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	chunk := &FetchedDataChunk{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range b.N {
			if q.put(ctx, chunk, nil, nil) != nil {
				return
			}
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := q.take(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	<-done
	q.close()
}
