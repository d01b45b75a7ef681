package fetch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestIntegrationDeletedTopicIsReported deletes a topic while it is being
// consumed. Its partitions are left without a leader; the leader finder
// reports each through OnError with UNKNOWN_TOPIC_OR_PARTITION, once,
// while another topic of the same fetcher keeps flowing.
func TestIntegrationDeletedTopicIsReported(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	doomed := newTopic(t, c, "fetch-deleted", 2, 1)
	kept := newTopic(t, c, "fetch-kept", 1, 1)
	produce(ctx, t, c, doomed, 100, testcluster.ProduceOptions{Partition: -1, ValueSize: 100})
	produce(ctx, t, c, kept, 100, testcluster.ProduceOptions{Partition: 0, ValueSize: 100})

	var rec errorRecorder
	cfg := testConfig(t)
	cfg.OnError = rec.record
	m := newManager(t, cfg, clusterBrokers(c))
	m.leaderlessGrace, m.leaderlessRepeat = time.Second, time.Hour
	s := newStream(t, 2)
	infos := append(infosFor(doomed, 2, []*streamcore.KafkaStream{s}, 0, 1<<20), infosFor(kept, 1, []*streamcore.KafkaStream{s}, 0, 1<<20)...)
	col := collect(s)
	if err := m.StartConnections(ctx, infos); err != nil {
		t.Fatal(err)
	}
	defer m.StopConnections()
	testwait.WaitFor(t, 30*time.Second, func() bool { return col.count() == 200 }, "200 messages")

	if err := c.DeleteTopic(ctx, doomed); err != nil {
		t.Fatal(err)
	}
	unknown := func(p int32) bool {
		for _, perr := range rec.partitionErrors(doomed) {
			if perr.Partition == p && errors.Is(perr, ErrNoLeader) && errors.Is(perr, sarama.ErrUnknownTopicOrPartition) &&
				strings.Contains(perr.Error(), "UNKNOWN_TOPIC_OR_PARTITION") {
				return true
			}
		}
		return false
	}
	testwait.WaitFor(t, 30*time.Second, func() bool { return unknown(0) && unknown(1) }, "both partitions reported")
	for _, perr := range rec.partitionErrors(doomed) {
		t.Logf("reported: %v", perr)
	}

	produce(ctx, t, c, kept, 50, testcluster.ProduceOptions{Partition: 0, ValueSize: 100, FirstSeq: 100})
	testwait.WaitFor(t, 30*time.Second, func() bool { return col.count() == 250 }, "the other topic read on")
	time.Sleep(2 * time.Second)
	reports := map[int32]int{}
	for _, perr := range rec.partitionErrors(doomed) {
		reports[perr.Partition]++
	}
	for p, n := range reports {
		if n > 2 {
			t.Errorf("partition %d reported %d times", p, n)
		}
	}
	col.stop()
}
