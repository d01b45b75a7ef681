package fetch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
)

// OnFetch is told about every fetch request, with its broker, duration and
// response size, and each partition's high watermark is recorded from the
// responses.
func TestOnFetchAndHighWatermark(t *testing.T) {
	res := &sarama.FetchResponse{Version: 12}
	for o := range int64(3) {
		res.AddRecord("t", 0, nil, sarama.StringEncoder("value"), o)
	}
	res.GetBlock("t", 0).HighWaterMarkOffset = 42
	// sarama's mock leaves a batch's last offset delta at 0, which the
	// decoder rejects (its records lie past it): say where it ends.
	res.GetBlock("t", 0).RecordsSet[0].RecordBatch.LastOffsetDelta = 2
	mb := mockFixedFetch(t, res, 0)

	var (
		mu     sync.Mutex
		events []FetchEvent
	)
	cfg := testConfig(t)
	cfg.OnFetch = func(e FetchEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}
	m := newManager(t, cfg, staticBrokers{{ID: 0, Addr: mb.Addr()}})
	s := newStream(t, 2)
	p := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 0, 0, 1<<20)
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p}); err != nil {
		t.Fatal(err)
	}
	defer m.StopConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 3 {
		if _, err := s.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if hw := p.HighWatermark(); hw != 42 {
		t.Errorf("high watermark %d, want 42", hw)
	}
	if lag, ok := p.Lag(); !ok || lag != 40 {
		t.Errorf("lag %d (%v), want 40: two messages marked consumed of 42", lag, ok)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) == 0 {
		t.Fatal("no fetch event")
	}
	e := events[0]
	if e.Broker != 0 || e.Addr != mb.Addr() || e.Err != nil {
		t.Errorf("event %+v, want broker 0 at %s without error", e, mb.Addr())
	}
	if e.Duration < 2*time.Millisecond {
		t.Errorf("duration %v, below the mock broker's latency", e.Duration)
	}
	if e.Bytes < 3*int64(len("value")) || e.Bytes > 1<<16 {
		t.Errorf("response size %d bytes, implausible", e.Bytes)
	}
}
