package connector

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestOrderedParallelPool: the README's ordered parallel processing, in
// both coordination modes. One stream feeds a pool of workers, each
// partition always going to the same worker; every worker sees each of its
// partitions' messages in offset order, with none missing, while
// partitions go in parallel, and the workers' CommitMessages, finishing
// in any order across partitions, leave every partition committed at its
// log end.
func TestOrderedParallelPool(t *testing.T) {
	t.Parallel()
	t.Run("zookeeper", func(t *testing.T) {
		c := testcluster.Shared(t)
		testOrderedParallelPool(t, c, testConfig(c, testcluster.UniqueName("g-pool")), func(group, topic string) map[int32]int64 {
			return readOffsets(t, c, group, topic, 5)
		})
	})
	t.Run("kafka", func(t *testing.T) {
		c := testcluster.SharedKRaft(t)
		testOrderedParallelPool(t, c, kafkaConfig(c, testcluster.UniqueName("g-pool")), func(group, topic string) map[int32]int64 {
			return kafkaCommitted(t, c, group, topic, 5)
		})
	})
}

func testOrderedParallelPool(t *testing.T, c *testcluster.Cluster, cfg Config, committed func(group, topic string) map[int32]int64) {
	const partitions, n, workers, batch = 5, 500, 3, 7
	topic := newTopic(t, c, partitions, n)
	cfg.AutoCommitEnable = false
	ctx := testwait.Context(t, 3*time.Minute)
	conn := newConnector(t, cfg)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)

	var (
		mu      sync.Mutex
		seen    = map[int32][]int64{} // per partition, the offsets in the order workers processed them
		workerO = map[int32]int{}     // the worker each partition went to
	)
	queues := make([]chan *Message, workers)
	var pool sync.WaitGroup
	for w := range queues {
		queues[w] = make(chan *Message, batch)
		pool.Go(func() {
			var done []*Message
			commit := func() {
				if len(done) > 0 {
					if err := conn.CommitMessages(ctx, done...); err != nil {
						t.Errorf("worker %d: CommitMessages: %v", w, err)
					}
					done = done[:0]
				}
			}
			for msg := range queues[w] {
				mu.Lock()
				if prev, ok := workerO[msg.Partition]; ok && prev != w {
					t.Errorf("partition %d went to workers %d and %d", msg.Partition, prev, w)
				}
				workerO[msg.Partition] = w
				seen[msg.Partition] = append(seen[msg.Partition], msg.Offset)
				mu.Unlock()
				done = append(done, msg)
				if len(done) >= batch {
					commit()
				}
			}
			commit()
		})
	}
	for range n {
		msg, err := streams[topic][0].Next(ctx)
		require.NoError(t, err)
		queues[int(msg.Partition)%workers] <- msg
	}
	for _, q := range queues {
		close(q)
	}
	pool.Wait()

	ends := map[int32]int64{}
	total := 0
	for p, offsets := range seen {
		for i, off := range offsets {
			require.Equal(t, int64(i), off, "partition %d: worker %d processed offsets %v, not 0, 1, 2, ... in order", p, workerO[p], offsets)
		}
		ends[p] = int64(len(offsets))
		total += len(offsets)
	}
	require.Equal(t, n, total)
	require.Len(t, seen, partitions, "every partition was processed")
	require.Equal(t, ends, committed(cfg.GroupID, topic), "each partition committed at its log end")
}
