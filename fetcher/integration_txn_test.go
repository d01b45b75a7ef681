package fetcher

import (
	"context"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

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
