package fetch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// benchMessages is the size of the topic the throughput benchmarks read.
const benchMessages = 500_000

var benchTopic struct {
	once  sync.Once
	name  string
	count int
	err   error
}

// benchData creates, once per test binary, a one-partition topic of
// benchMessages uncompressed 100-byte messages.
func benchData(b *testing.B) (*testcluster.Cluster, string, int) {
	c := testcluster.Shared(b)
	benchTopic.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		name := testcluster.UniqueName("fetch-bench")
		if err := c.CreateTopic(ctx, name, 1, 1); err != nil {
			benchTopic.err = err
			return
		}
		p, err := c.Produce(ctx, name, benchMessages, testcluster.ProduceOptions{Partition: 0, ValueSize: 100})
		benchTopic.name, benchTopic.count, benchTopic.err = name, p.Count(), err
	})
	if benchTopic.err != nil {
		b.Fatal(benchTopic.err)
	}
	b.Logf("topic %s: %d messages", benchTopic.name, benchTopic.count)
	return c, benchTopic.name, benchTopic.count
}

// BenchmarkThroughputManager reads the whole topic through the manager and
// a stream, as an application would (Next, which marks consumed).
func BenchmarkThroughputManager(b *testing.B) {
	c, topic, n := benchData(b)
	cfg := DefaultConfig()
	m, err := NewConsumerFetcherManager(cfg, clusterBrokers(c))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		s, ctl, _ := streamcore.NewKafkaStream(2, -1)
		p := streamcore.NewPartitionTopicInfo(topic, 0, streamcore.QueueOf(s), 0, 0, 1<<20)
		if err := m.StartConnections(ctx, []*streamcore.PartitionTopicInfo{p}); err != nil {
			b.Fatal(err)
		}
		for range n {
			if _, err := s.Next(ctx); err != nil {
				b.Fatal(err)
			}
		}
		m.StopConnections()
		ctl.Shutdown()
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "msgs/s")
}

// BenchmarkThroughputSaramaPartitionConsumer is the baseline: sarama's own
// partition consumer on the same topic.
func BenchmarkThroughputSaramaPartitionConsumer(b *testing.B) {
	c, topic, n := benchData(b)
	cfg := testcluster.SaramaConfig()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		consumer, err := sarama.NewConsumer(c.BrokerAddrs(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
		if err != nil {
			b.Fatal(err)
		}
		for range n {
			<-pc.Messages()
		}
		_ = pc.Close()
		_ = consumer.Close()
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "msgs/s")
}
