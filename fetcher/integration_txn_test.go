package fetcher

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/internal/testcluster"
	"github.com/zkconsumer/zkconsumer/stream"
)

// produceTxn writes n keyed messages to partition 0 of topic in one
// transaction, sequence numbers from firstSeq, and commits or aborts it.
// It returns the offsets of the messages.
func produceTxn(t *testing.T, c *testcluster.Cluster, topic string, firstSeq, n int, commit bool) []int64 {
	t.Helper()
	cfg := testcluster.SaramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = testcluster.UniqueName("zkconsumer-test-txn")
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer(c.BrokerAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.BeginTxn(); err != nil {
		t.Fatal(err)
	}
	msgs := make([]*sarama.ProducerMessage, n)
	for i := range msgs {
		seq := firstSeq + i
		msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0,
			Key:   sarama.StringEncoder(fmt.Sprintf("key-%d", seq)),
			Value: sarama.ByteEncoder(testcluster.MessageValue(seq, 100))}
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
	if commit {
		err = p.CommitTxn()
	} else {
		err = p.AbortTxn()
	}
	if err != nil {
		t.Fatal(err)
	}
	offsets := make([]int64, n)
	for i, m := range msgs {
		offsets[i] = m.Offset
	}
	return offsets
}

// logEnd is the log end offset of partition 0 of topic.
func logEnd(t *testing.T, c *testcluster.Cluster, topic string) int64 {
	t.Helper()
	client, err := sarama.NewClient(c.BrokerAddrs(), testcluster.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	off, err := client.GetOffset(topic, 0, sarama.OffsetNewest)
	if err != nil {
		t.Fatal(err)
	}
	return off
}

// TestIntegrationConsumedOffsetPassesTransactionMarkers: a partition ends
// with a committed transaction and an aborted one. Once the application
// has consumed the last message delivered, the consumed offset (the one
// committed) is the end of the log, past the markers and, under
// read_committed, the aborted messages; before that, it never passes a
// message not yet consumed.
func TestIntegrationConsumedOffsetPassesTransactionMarkers(t *testing.T) {
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := newTopic(ctx, t, c, "fetch-txn-tail", 1, 1)
	// Brokers write the markers after the transaction ends: wait for each,
	// so that it directly follows its transaction's messages.
	committed := produceTxn(t, c, topic, 0, 10, true)
	waitFor(t, 30*time.Second, "the commit marker", func() bool { return logEnd(t, c, topic) == committed[9]+2 })
	aborted := produceTxn(t, c, topic, 10, 5, false)
	end := aborted[len(aborted)-1] + 2
	waitFor(t, 30*time.Second, "the abort marker", func() bool { return logEnd(t, c, topic) == end })
	t.Logf("committed at %v, aborted at %v, log end %d", committed, aborted, end)

	for _, isolation := range []string{IsolationReadCommitted, IsolationReadUncommitted} {
		t.Run(isolation, func(t *testing.T) {
			want := committed
			if isolation == IsolationReadUncommitted {
				want = append(append([]int64(nil), committed...), aborted...)
			}
			cfg := testConfig(t)
			cfg.IsolationLevel = isolation
			m := newManager(t, cfg, clusterBrokers(c))
			s := newStream(t, 2)
			p := stream.NewPartitionTopicInfo(topic, 0, s.Queue(), 0, 0, 1<<20)
			if err := m.StartConnections(ctx, []*stream.PartitionTopicInfo{p}); err != nil {
				t.Fatal(err)
			}
			defer m.StopConnections()
			for i, off := range want {
				msg, err := s.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if msg.Offset != off {
					t.Fatalf("message %d has offset %d, want %d", i, msg.Offset, off)
				}
				// Whatever the fetcher has seen, the message in hand is
				// not consumed yet.
				if got := p.ConsumedOffset(); got > off {
					t.Fatalf("consumed offset %d while message %d is in hand", got, off)
				}
			}
			waitFor(t, 10*time.Second, "the fetcher at the log end", func() bool { return p.FetchedOffset() == end })
			// The application asks for more: the last message is
			// consumed, and nothing else is to come.
			waitCtx, waitCancel := context.WithTimeout(ctx, 500*time.Millisecond)
			msg, err := s.Next(waitCtx)
			waitCancel()
			if err == nil {
				t.Fatalf("unexpected message at %d", msg.Offset)
			}
			if got := p.ConsumedOffset(); got != end {
				t.Errorf("consumed offset %d, want the log end %d", got, end)
			}
		})
	}
}
