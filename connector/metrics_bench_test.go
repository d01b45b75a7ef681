package connector

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// BenchmarkConsumeMetrics reads the 100-byte, 4-partition topic of
// BenchmarkConsume (where the cost per message matters most) with
// Config.Metrics off and on, alternating in one run. With metrics on, a
// minimal Metrics counts the events and a scraper calls Stats every
// second, as a Prometheus scrape would (at a higher rate than usual).
func BenchmarkConsumeMetrics(b *testing.B) {
	c := testcluster.Shared(b)
	t := benchData(b, c, benchCases[0])
	for _, on := range []bool{false, true} {
		name := "metrics=off"
		if on {
			name = "metrics=on"
		}
		b.Run(name, func(b *testing.B) {
			benchRead(b, t, func(ctx context.Context, p *progress) error {
				cfg := benchConfig(c)
				if on {
					cfg.Metrics = &benchMetrics{}
				}
				return readConnectorWith(ctx, cfg, t, int(benchCases[0].partitions), p)
			})
		})
	}
}

// benchMetrics counts events and calls Stats once a second while
// attached.
type benchMetrics struct {
	events atomic.Int64
	stop   chan struct{}
	wg     sync.WaitGroup
}

func (m *benchMetrics) Attach(c *ConsumerConnector) error {
	m.stop = make(chan struct{})
	m.wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-tick.C:
				_ = c.Stats()
			}
		}
	})
	return nil
}

func (m *benchMetrics) Detach() {
	close(m.stop)
	m.wg.Wait()
}

func (m *benchMetrics) Fetch(FetchEvent)         { m.events.Add(1) }
func (m *benchMetrics) Rebalance(RebalanceEvent) { m.events.Add(1) }
func (m *benchMetrics) Commit(CommitEvent)       { m.events.Add(1) }
