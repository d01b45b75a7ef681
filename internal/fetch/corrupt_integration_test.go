package fetch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestIntegrationCorruptBatch puts a proxy that corrupts one message of
// one batch (its checksum no longer matches) between the fetcher and a
// real broker. The other partition of the fetcher reads to the end; the
// corrupt one delivers every message before the bad batch, then reports
// ErrCorruptMessage, and stays at the bad batch.
func TestIntegrationCorruptBatch(t *testing.T) {
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := newTopic(t, c, "fetch-corrupt", 2, 1)
	good := produce(ctx, t, c, topic, 30, testcluster.ProduceOptions{Partition: 1, ValueSize: 100})
	bad := produceOneBatch(ctx, t, c, topic, 1, 30, []int{100, 100, 100, 100, 100})
	produce(ctx, t, c, topic, 30, testcluster.ProduceOptions{Partition: 1, ValueSize: 100, FirstSeq: 35})
	other := produce(ctx, t, c, topic, 500, testcluster.ProduceOptions{Partition: 0, ValueSize: 100, FirstSeq: 1000})
	badOffset := bad.Offsets[1][0]

	// "seq=32;" is in the value of the third message of the bad batch only.
	proxy := newCorruptingProxy(t, c.BrokerAddrs()[0], []byte("seq=32;"), []byte("seq=32:"))
	m := newManager(t, testConfig(t), staticBrokers{{ID: 0, Addr: proxy.addr()}})
	s0, s1 := newStream(t, 2), newStream(t, 2)
	p1 := streamcore.NewPartitionTopicInfo(topic, 1, streamcore.QueueOf(s1), 0, 0, 1<<20)
	infos := []*streamcore.PartitionTopicInfo{streamcore.NewPartitionTopicInfo(topic, 0, streamcore.QueueOf(s0), 0, 0, 1<<20), p1}
	col := collect(s0)
	if err := m.StartConnections(ctx, infos); err != nil {
		t.Fatal(err)
	}
	readCtx, readCancel := context.WithTimeout(ctx, 30*time.Second)
	got, err := nextOrError(readCtx, s1)
	readCancel()
	if !errors.Is(err, streamcore.ErrCorruptMessage) {
		t.Fatalf("partition 1: %d messages, then %v; want ErrCorruptMessage", len(got), err)
	}
	t.Logf("partition 1: %d messages, then %v", len(got), err)
	checkExactlyOnce(t, got, good)
	testwait.WaitFor(t, 30*time.Second, func() bool { return col.count() >= other.Count() }, "partition 0 read to the end")
	time.Sleep(300 * time.Millisecond)
	offsets := m.StopConnections()
	checkExactlyOnce(t, col.stop(), other)
	if got := offsets[zkutil.TopicPartition{Topic: topic, Partition: 1}]; got != badOffset {
		t.Errorf("partition 1 stopped at %d, want %d (the bad batch)", got, badOffset)
	}
}
