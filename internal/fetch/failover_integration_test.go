package fetch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestIntegrationLeaderFailover kills the leader of a partition in the
// middle of the stream: its partitions move to the new leaders through the
// leader finder and every message arrives exactly once, in order.
func TestIntegrationLeaderFailover(t *testing.T) {
	c := testcluster.Private(t, testcluster.Options{Brokers: 3, BrokerSessionTimeout: 4 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	topic := newTopic(t, c, "fetch-failover", 3, 3)
	opts := testcluster.ProduceOptions{Partition: -1, Compression: sarama.CompressionLZ4, ValueSize: 100}
	want := produce(ctx, t, c, topic, 3000, opts)

	var (
		mu       sync.Mutex
		reported []error
	)
	cfg := testConfig(t)
	cfg.SocketTimeout = 5 * time.Second
	cfg.OnError = func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	}
	m := newManager(t, cfg, clusterBrokers(c))
	streams := []*streamcore.KafkaStream{newStream(t, 2), newStream(t, 2)}
	// Small fetches, and nobody reading yet: every fetcher is blocked in
	// the middle of the log when the leader dies.
	infos := infosFor(topic, 3, streams, 0, 4096)
	if err := m.StartConnections(ctx, infos); err != nil {
		t.Fatal(err)
	}
	testwait.WaitFor(t, 60*time.Second, func() bool {
		return streamcore.QueueOf(streams[0]).Len() == 2 && streamcore.QueueOf(streams[1]).Len() == 2
	}, "queues full")
	st, err := c.ReadPartitionState(ctx, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killing broker %d, leader of partition 0, at fetched offsets %d %d %d", st.Leader, infos[0].FetchedOffset(), infos[1].FetchedOffset(), infos[2].FetchedOffset())
	if err := c.KillBroker(st.Leader); err != nil {
		t.Fatal(err)
	}
	col := collect(streams...)
	opts.FirstSeq = 3000
	want = merge(want, produce(ctx, t, c, topic, 3000, opts))
	testwait.WaitFor(t, 2*time.Minute, func() bool { return col.count() >= want.Count() }, "all messages")
	time.Sleep(500 * time.Millisecond)
	offsets := m.StopConnections()
	msgs := col.stop()
	checkExactlyOnce(t, msgs, want)
	for p, offs := range want.Offsets {
		for tp, off := range offsets {
			if tp.Partition == p && off != offs[len(offs)-1]+1 {
				t.Errorf("%s stopped at %d, want %d", tp, off, offs[len(offs)-1]+1)
			}
		}
	}
	mu.Lock()
	t.Logf("%d errors reported during the failover; first: %v", len(reported), first(reported))
	mu.Unlock()
}

func first(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}
