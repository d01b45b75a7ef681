package fetch

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestIntegrationConsumedOffsetPassesTransactionMarkers: a partition ends
// with a committed transaction and an aborted one. Once the application
// has consumed the last message delivered, the consumed offset (the one
// committed) is the end of the log, past the markers and, under
// read_committed, the aborted messages; before that, it never passes a
// message not yet consumed.
func TestIntegrationConsumedOffsetPassesTransactionMarkers(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := newTopic(t, c, "fetch-txn-tail", 1, 1)
	txn, err := c.ProduceTxn(ctx, topic, 0, 0, 10, true)
	if err != nil {
		t.Fatal(err)
	}
	abortedTxn, err := c.ProduceTxn(ctx, topic, 0, 10, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	committed, aborted := txn.Offsets[0], abortedTxn.Offsets[0]
	end, err := c.LogEnd(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("committed at %v, aborted at %v, log end %d", committed, aborted, end)
	if end != aborted[len(aborted)-1]+2 {
		t.Fatalf("log end %d: the markers are not where the test expects them", end)
	}

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
			p := streamcore.NewPartitionTopicInfo(topic, 0, streamcore.QueueOf(s), 0, 0, 1<<20)
			if err := m.StartConnections(ctx, []*streamcore.PartitionTopicInfo{p}); err != nil {
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
			testwait.WaitFor(t, 10*time.Second, func() bool { return p.FetchedOffset() == end }, "the fetcher at the log end")
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

// TestIntegrationInterleavedAbortedTransactions: two transactions abort
// across each other and a third commits between their markers, so that
// the broker lists the aborted ones by their markers, the later-started
// first (what the decoder sorts in the response itself). Under
// read_committed only the committed messages are delivered, with the
// fetch size large or small enough to cut the log into many fetches;
// under read_uncommitted every message is.
func TestIntegrationInterleavedAbortedTransactions(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := newTopic(t, c, "fetch-txn-interleaved", 1, 1)
	producer := func() sarama.SyncProducer {
		cfg := c.ClientConfig()
		cfg.Producer.Idempotent = true
		cfg.Producer.Transaction.ID = testcluster.UniqueName("zkconsumer-fetch-interleaved")
		cfg.Producer.Partitioner = sarama.NewManualPartitioner
		cfg.Producer.Return.Successes = true
		cfg.Producer.RequiredAcks = sarama.WaitForAll
		cfg.Net.MaxOpenRequests = 1
		p, err := sarama.NewSyncProducer(c.BrokerAddrs(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		return p
	}
	send := func(p sarama.SyncProducer, name string, n int) []int64 {
		msgs := make([]*sarama.ProducerMessage, n)
		for i := range msgs {
			msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(fmt.Sprintf("%s%d", name, i))}
		}
		if err := p.SendMessages(msgs); err != nil {
			t.Fatal(err)
		}
		var offsets []int64
		for _, m := range msgs {
			offsets = append(offsets, m.Offset)
		}
		return offsets
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	a, b, k := producer(), producer(), producer()
	must(a.BeginTxn())
	all := send(a, "a", 3)
	must(b.BeginTxn())
	all = append(all, send(b, "b", 3)...)
	all = append(all, send(a, "a", 3)...)
	must(b.AbortTxn())
	must(k.BeginTxn())
	committed := send(k, "k", 3)
	all = append(all, committed...)
	must(a.AbortTxn())
	must(k.CommitTxn())
	slices.Sort(all)
	var end int64
	testwait.WaitFor(t, 30*time.Second, func() bool {
		var err error
		end, err = c.LogEnd(topic, 0)
		return err == nil && end == int64(len(all))+3 // the messages and three markers

	}, "the three markers in the log")
	t.Logf("messages at %v, committed %v, log end %d", all, committed, end)

	for _, isolation := range []string{IsolationReadCommitted, IsolationReadUncommitted} {
		for _, size := range []int32{1 << 20, 300} {
			t.Run(fmt.Sprint(isolation, "/", size), func(t *testing.T) {
				want := committed
				if isolation == IsolationReadUncommitted {
					want = all
				}
				cfg := testConfig(t)
				cfg.IsolationLevel = isolation
				m := newManager(t, cfg, clusterBrokers(c))
				s := newStream(t, 2)
				p := streamcore.NewPartitionTopicInfo(topic, 0, streamcore.QueueOf(s), 0, 0, size)
				if err := m.StartConnections(ctx, []*streamcore.PartitionTopicInfo{p}); err != nil {
					t.Fatal(err)
				}
				defer m.StopConnections()
				var got []int64
				for range want {
					msg, err := s.Next(ctx)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, msg.Offset)
				}
				testwait.WaitFor(t, 10*time.Second, func() bool { return p.FetchedOffset() == end }, "the fetcher at the log end")
				waitCtx, waitCancel := context.WithTimeout(ctx, 300*time.Millisecond)
				msg, err := s.Next(waitCtx)
				waitCancel()
				if err == nil {
					got = append(got, msg.Offset)
				}
				if !equalOffsets(got, want) {
					t.Errorf("delivered %v, want %v", got, want)
				}
			})
		}
	}
}
