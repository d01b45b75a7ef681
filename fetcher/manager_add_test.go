package fetcher

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/stream"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestAddPartitionsAndAttach: a partition added to running connections is
// fetched from its offset and stopped with the others; a goroutine attached
// to them sees its context end and is waited for by StopConnections.
func TestAddPartitionsAndAttach(t *testing.T) {
	mb := mockCluster(t, 2, 30)
	m := newManager(t, testConfig(t), StaticBrokers{{ID: 0, Addr: mb.Addr()}})
	s := newStream(t, 2)
	p0 := stream.NewPartitionTopicInfo("t", 0, s.Queue(), 25, 25, 1<<20)
	p1 := stream.NewPartitionTopicInfo("t", 1, s.Queue(), 10, 10, 1<<20)
	if err := m.AddPartitions([]*stream.PartitionTopicInfo{p1}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("add before start: %v", err)
	}
	if err := m.Attach(func(context.Context) {}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("attach before start: %v", err)
	}
	if err := m.StartConnections(context.Background(), []*stream.PartitionTopicInfo{p0}); err != nil {
		t.Fatal(err)
	}
	c := collect(s)
	waitFor(t, 10*time.Second, "partition 0 fetched", func() bool { return c.count() == 5 })

	var attachedDone atomic.Bool
	added := make(chan error, 1)
	if err := m.Attach(func(ctx context.Context) {
		added <- m.AddPartitions([]*stream.PartitionTopicInfo{p1})
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond) // StopConnections must wait for this
		attachedDone.Store(true)
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-added; err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "added partition fetched", func() bool { return c.count() == 25 })
	if err := m.AddPartitions([]*stream.PartitionTopicInfo{p0}); err == nil {
		t.Error("a partition already fetched was added again")
	}

	offsets := m.StopConnections()
	if !attachedDone.Load() {
		t.Error("StopConnections returned before the attached goroutine")
	}
	tp1 := zkutil.TopicPartition{Topic: "t", Partition: 1}
	if offsets[tp1] != 30 {
		t.Errorf("offsets %v", offsets)
	}
	for _, msg := range c.stop() {
		if msg.Partition == 1 && msg.Offset < 10 {
			t.Fatalf("partition 1 read from %d, not from its offset 10", msg.Offset)
		}
	}
	if err := m.AddPartitions([]*stream.PartitionTopicInfo{p1}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("add after stop: %v", err)
	}
}
