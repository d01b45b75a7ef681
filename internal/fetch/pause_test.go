package fetch

import (
	"context"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// A full stream whose partition is paused no longer blocks its fetcher:
// the fetcher's other partition flows to its end while the paused one is
// not fetched, and once resumed it continues where it stopped, without a
// gap or a repeat.
func TestPausedPartitionDoesNotBlockItsFetcher(t *testing.T) {
	const n = 120
	mb := mockCluster(t, 2, n)
	cfg := testConfig(t)
	cfg.NumFetchers = 1
	m := newManager(t, cfg, staticBrokers{{ID: 0, Addr: mb.Addr()}})
	slow, fast := newStream(t, 1), newStream(t, 2)
	p0 := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(slow), 0, 0, 1<<20)
	p1 := streamcore.NewPartitionTopicInfo("t", 1, streamcore.QueueOf(fast), 0, 0, 1<<20)
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p0, p1}); err != nil {
		t.Fatal(err)
	}
	defer m.StopConnections()
	// Nobody reads slow: its queue fills and the fetcher blocks on it.
	testwait.WaitFor(t, 10*time.Second, func() bool { return streamcore.QueueOf(slow).Len() == 1 }, "slow stream full")

	p0.Pause()
	c := collect(fast)
	testwait.WaitFor(t, 10*time.Second, func() bool { return c.count() == n }, "the other partition read to its end")
	for i, msg := range c.stop() {
		if msg.Partition != 1 || msg.Offset != int64(i) {
			t.Fatalf("message %d: partition %d offset %d", i, msg.Partition, msg.Offset)
		}
	}
	paused := p0.FetchedOffset()
	time.Sleep(5 * cfg.RefreshLeaderBackoff)
	if got := p0.FetchedOffset(); got != paused {
		t.Fatalf("paused partition fetched from %d to %d", paused, got)
	}

	p0.Resume()
	c = collect(slow)
	testwait.WaitFor(t, 10*time.Second, func() bool { return c.count() == n }, "resumed partition read to its end")
	for i, msg := range c.stop() {
		if msg.Partition != 0 || msg.Offset != int64(i) {
			t.Fatalf("message %d: partition %d offset %d", i, msg.Partition, msg.Offset)
		}
	}
}
