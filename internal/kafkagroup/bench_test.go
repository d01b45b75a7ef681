package kafkagroup

import (
	"slices"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// BenchmarkGracefulLeaveRebalance is the Kafka-coordinated counterpart of
// rebalance's BenchmarkGracefulLeaveRebalance: a group of four members on
// a 32-partition topic, range assignor, heartbeats every 300 ms; an op
// starts when the oldest member begins Close (LeaveGroup) and ends when
// the three others hold one generation that covers the topic. Outside the
// timer a new fourth member joins and the group settles. Run it against
// Kafka 3.9 (ZooKeeper mode) and Kafka 4.x (KRaft).
func BenchmarkGracefulLeaveRebalance(b *testing.B) {
	b.Run("broker=kafka3.9", func(b *testing.B) { benchGracefulLeave(b, testcluster.Shared(b)) })
	b.Run("broker=kraft4", func(b *testing.B) { benchGracefulLeave(b, testcluster.SharedKRaft(b)) })
}

func benchGracefulLeave(b *testing.B, c *testcluster.Cluster) {
	const partitions = 32
	topic := createTopic(b, c, "kg-bench", partitions)
	group := testcluster.UniqueName("kg-bench")
	cfg := testConfig(c, group, topic)
	want := map[string]int32{topic: partitions}
	var members []*runner
	for range 4 {
		members = append(members, startRunner(b, cfg))
	}
	testwait.WaitFor(b, time.Minute, func() bool { return settled(want, members...) }, "four members settled")
	var took []time.Duration
	for b.Loop() {
		leaver, rest := members[0], slices.Clone(members[1:])
		start := time.Now()
		leaver.stop()
		testwait.WaitFor(b, time.Minute, func() bool { return settled(want, rest...) }, "three members settled")
		took = append(took, time.Since(start))
		b.StopTimer()
		members = append(rest, startRunner(b, cfg))
		testwait.WaitFor(b, time.Minute, func() bool { return settled(want, members...) }, "four members settled")
		b.StartTimer()
	}
	slices.Sort(took)
	if n := len(took); n > 0 {
		b.ReportMetric(float64(took[n/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(took[n*9/10].Microseconds())/1000, "p90-ms")
		b.ReportMetric(float64(took[n-1].Microseconds())/1000, "max-ms")
	}
}
