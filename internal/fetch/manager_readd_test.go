package fetch

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestAddReplacesRevokedPartition: a partition revoked while the
// connections run (given up in a rebalance) can be added again with a new
// PartitionTopicInfo (owned again later): it is fetched from the new
// info's offset, the other partitions keep flowing, and a partition that
// was not revoked is still refused.
func TestAddReplacesRevokedPartition(t *testing.T) {
	m, s, p0, _, c := fetchTwoPartitions(t)

	p0.Revoke()
	again := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 10, 10, 1<<20)
	if err := m.AddPartitions([]*streamcore.PartitionTopicInfo{again}); err != nil {
		t.Fatalf("adding a revoked partition again: %v", err)
	}
	testwait.WaitFor(t, 10*time.Second, func() bool { return c.count() == 55 }, "the partition fetched again from its new offset")
	if err := m.AddPartitions([]*streamcore.PartitionTopicInfo{streamcore.NewPartitionTopicInfo("t", 1, streamcore.QueueOf(s), 0, 0, 1<<20)}); err == nil {
		t.Error("a partition being fetched (not revoked) was added again")
	}
	offsets := m.StopConnections()
	msgs := c.stop()
	seen := map[int64]int{}
	for _, msg := range msgs[35:] {
		if msg.Partition != 0 {
			t.Fatalf("partition %d delivered after the re-add, want only partition 0", msg.Partition)
		}
		seen[msg.Offset]++
	}
	for off := int64(10); off < 30; off++ {
		if seen[off] != 1 {
			t.Errorf("offset %d of partition 0 delivered %d times after the re-add", off, seen[off])
		}
	}
	if got := offsets[zkutil.TopicPartition{Topic: "t", Partition: 0}]; got != 30 {
		t.Errorf("fetched offset of the re-added partition: %d, want 30", got)
	}
}

// TestStopLeavesRevokedPartitionsOut: StopConnections returns, and logs the
// count of, the partitions still being fetched; one revoked by an
// incremental rebalance and not added again is not among them (it was
// counted and returned with its last fetched offset, as if still owned).
func TestStopLeavesRevokedPartitionsOut(t *testing.T) {
	m, _, _, p1, c := fetchTwoPartitions(t)
	p1.Revoke()
	offsets := m.StopConnections()
	c.stop()
	want := map[zkutil.TopicPartition]int64{{Topic: "t", Partition: 0}: 30}
	if !maps.Equal(offsets, want) {
		t.Errorf("StopConnections after p1 was revoked: %v, want %v", offsets, want)
	}
}

// fetchTwoPartitions starts a manager on a mock broker whose topic "t" has
// two partitions of 30 messages, partition 0 from offset 25 and partition 1
// from 0, into one stream, and waits until all 35 are delivered.
func fetchTwoPartitions(t *testing.T) (*ConsumerFetcherManager, *streamcore.KafkaStream, *streamcore.PartitionTopicInfo, *streamcore.PartitionTopicInfo, *collector) {
	t.Helper()
	mb := mockCluster(t, 2, 30)
	m := newManager(t, testConfig(t), staticBrokers{{ID: 0, Addr: mb.Addr()}})
	s := newStream(t, 4)
	p0 := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 25, 25, 1<<20)
	p1 := streamcore.NewPartitionTopicInfo("t", 1, streamcore.QueueOf(s), 0, 0, 1<<20)
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p0, p1}); err != nil {
		t.Fatal(err)
	}
	c := collect(s)
	testwait.WaitFor(t, 10*time.Second, func() bool { return c.count() == 35 }, "both partitions fetched")
	return m, s, p0, p1, c
}
