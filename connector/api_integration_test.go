package connector

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// bothModes runs f with a member configuration of each coordination mode,
// both against the Kafka 3.9 cluster.
func bothModes(t *testing.T, f func(t *testing.T, c *testcluster.Cluster, cfg func(group string) Config)) {
	c := testcluster.Shared(t)
	t.Run("zookeeper", func(t *testing.T) {
		f(t, c, func(group string) Config { return testConfig(c, group) })
	})
	t.Run("kafka", func(t *testing.T) {
		f(t, c, func(group string) Config { return kafkaConfig(c, group) })
	})
}

// TestCommitOffsetsAndAssignmentSayWhat: CommitOffsets and Assignment tell
// the caller whether the member owns its partitions and, when it does not,
// why: not joined yet, then owning every partition (commits land), then
// shut down. Pause and CommitOffsetsMap refuse alike.
func TestCommitOffsetsAndAssignmentSayWhat(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, c *testcluster.Cluster, config func(string) Config) {
		topic := newTopic(t, c, 3, 30)
		group := testcluster.UniqueName("g-api")
		cfg := config(group)
		cfg.AutoCommitEnable = false
		conn, err := New(t.Context(), cfg)
		require.NoError(t, err)
		ctx := testwait.Context(t, 3*time.Minute)

		require.ErrorIs(t, conn.CommitOffsets(ctx), ErrNotJoined)
		require.ErrorIs(t, conn.Assignment().Err, ErrNotJoined)

		streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 2})
		require.NoError(t, err)
		a := conn.Assignment()
		require.NoError(t, a.Err)
		require.Positive(t, a.Generation)
		require.Equal(t, map[string][]int32{topic: {0, 1, 2}}, a.Partitions)
		require.Len(t, a.Streams, 3)
		for tp, th := range a.Streams {
			require.Equal(t, topic, tp.Topic)
			require.Contains(t, []int{0, 1}, th)
		}
		require.Empty(t, a.Paused)

		col := newCollector()
		for i, s := range streams[topic] {
			col.read(ctx, fmt.Sprint("a", i), s)
		}
		col.waitAll(t, 0, 30, time.Minute)
		// The last message of each partition is consumed once the reader
		// asks for the next: wait for the consumed offsets to reach the end.
		require.Eventually(t, func() bool {
			total := int64(0)
			for _, p := range conn.Stats().Partitions {
				total += p.ConsumedOffset
			}
			return total == 30
		}, time.Minute, 20*time.Millisecond)
		require.NoError(t, conn.CommitOffsets(ctx))
		require.NoError(t, conn.CommitOffsets(ctx), "nothing moved: nothing to write, still a success")
		committed := map[int32]int64{}
		if cfg.kafkaMode() {
			committed = kafkaCommitted(t, c, group, topic, 3)
		} else {
			committed = readOffsets(t, c, group, topic, 3)
		}
		total := int64(0)
		for _, off := range committed {
			total += off
		}
		require.Equal(t, int64(30), total, "committed %v", committed)

		err = conn.CommitOffsetsMap(ctx, map[TopicPartition]int64{{Topic: topic, Partition: 7}: 1})
		require.ErrorIs(t, err, ErrNotOwner)
		require.ErrorIs(t, conn.Pause(TopicPartition{Topic: "other", Partition: 0}), ErrNotOwner)

		shutdown(t, conn)
		col.wg.Wait()
		err = conn.CommitOffsets(ctx)
		require.ErrorIs(t, err, ErrShutdown)
		require.ErrorIs(t, err, streamcore.ErrShutdown, "one ErrShutdown for the connector and the streams")
		require.ErrorIs(t, conn.Assignment().Err, ErrShutdown)
		err = conn.CommitOffsetsMap(ctx, map[TopicPartition]int64{{Topic: topic, Partition: 0}: 1})
		require.ErrorIs(t, err, ErrShutdown)
		require.ErrorIs(t, err, ErrNotOwner)
		require.ErrorIs(t, conn.Pause(TopicPartition{Topic: topic, Partition: 0}), ErrShutdown)
		_, err = streams[topic][0].Next(ctx)
		require.ErrorIs(t, err, ErrShutdown)
	})
}

// TestFirstRebalanceFailureIsVisible: when the first rebalance fails
// rebalance.max.retries times (a stranger holds a partition's owner node),
// CreateMessageStreams still returns the streams, and Assignment and
// CommitOffsets say why nothing is owned; once the stranger lets go, the
// member's background retries succeed and the assignment appears.
func TestFirstRebalanceFailureIsVisible(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 2, 10)
	group := testcluster.UniqueName("g-firstfail")
	ctx := testwait.Context(t, 2*time.Minute)
	observer, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
	require.NoError(t, err)
	defer observer.Close()
	squatter := zkutil.OwnerPath(group, topic, 0)
	require.NoError(t, observer.CreateEphemeral(ctx, squatter, []byte("stranger-0")))

	cfg := testConfig(c, group)
	cfg.RebalanceMaxRetries = 2
	cfg.RebalanceBackoff = 50 * time.Millisecond
	conn := newConnector(t, cfg)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err, "the streams are returned; the member keeps trying")
	require.Len(t, streams[topic], 1)
	a := conn.Assignment()
	require.ErrorIs(t, a.Err, ErrRebalanceFailed)
	require.Empty(t, a.Partitions)
	require.ErrorIs(t, conn.CommitOffsets(ctx), ErrRebalanceFailed)
	select {
	case err := <-conn.Errors():
		require.ErrorIs(t, err, ErrRebalanceFailed)
	case <-time.After(10 * time.Second):
		t.Fatal("no ErrRebalanceFailed on Errors")
	}

	require.NoError(t, observer.Delete(ctx, squatter, -1))
	require.Eventually(t, func() bool { return conn.Assignment().Err == nil }, time.Minute, 20*time.Millisecond)
	require.Equal(t, map[string][]int32{topic: {0, 1}}, conn.Assignment().Partitions)
	col := newCollector()
	col.read(ctx, "a", streams[topic][0])
	col.waitAll(t, 0, 10, time.Minute)
}

// TestPauseResume: with one fetcher serving two partitions whose streams
// are read by different goroutines, a stream nobody reads fills up and
// blocks the fetcher, starving the other partition; pausing the unread
// partition lets the other flow to its end without leaving the group.
// While paused, nothing of the partition is delivered, even what is
// produced meanwhile; resumed, it continues where it stopped, every
// message once and in order. A rebalance that leaves the partition with
// this member keeps it paused.
func TestPauseResume(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, c *testcluster.Cluster, config func(string) Config) {
		const n, batch = 200, 10
		topic := newTopic(t, c, 2, 0)
		ctx := testwait.Context(t, 3*time.Minute)
		for p := range int32(2) {
			for i := 0; i < n; i += batch { // small batches, several per fetch
				_, err := c.Produce(ctx, topic, batch, testcluster.ProduceOptions{Partition: p, FirstSeq: int(p)*10000 + i, ValueSize: 100})
				require.NoError(t, err)
			}
		}
		group := testcluster.UniqueName("g-pause")
		cfg := config(group)
		cfg.QueuedMaxMessageChunks = 1
		cfg.FetchMessageMaxBytes = 4096 // a few batches per chunk
		cfg.NumConsumerFetchers = 1
		conn := newConnector(t, cfg)
		streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 2})
		require.NoError(t, err)
		a := conn.Assignment()
		require.NoError(t, a.Err)
		p0 := TopicPartition{Topic: topic, Partition: 0}
		p1 := TopicPartition{Topic: topic, Partition: 1}
		slow, fast := streams[topic][a.Streams[p0]], streams[topic][a.Streams[p1]]
		require.NotSame(t, slow, fast, "range gives each stream one partition")

		// Nobody reads slow: its queue fills and the fetcher blocks on it.
		col := newCollector()
		col.read(ctx, "fast", fast)
		time.Sleep(time.Second)
		require.Less(t, len(col.snapshot()), n, "the fast partition is starved while the fetcher is blocked")

		require.NoError(t, conn.Pause(p0))
		require.NoError(t, conn.Pause(p0), "pausing twice does nothing")
		require.Equal(t, map[string][]int32{topic: {0}}, conn.Assignment().Paused)
		rs := col.waitAll(t, 10000, n, time.Minute)
		checkOrder(t, rs)

		// While paused, even a reader of the slow stream gets nothing more
		// than what it may have had in hand when the pause came.
		var slowCount atomic.Int64
		slowCtx, stopSlow := context.WithCancel(ctx)
		slowCol := newCollector()
		slowCol.wg.Add(1)
		go func() {
			defer slowCol.wg.Done()
			for {
				msg, err := slow.Next(slowCtx)
				if err != nil && (errors.Is(err, ErrShutdown) || slowCtx.Err() != nil) {
					break
				}
				if err == nil {
					seq, _ := testcluster.ParseSeq(msg.Value)
					slowCol.add(record{Consumer: "slow", Partition: msg.Partition, Offset: msg.Offset, Seq: seq})
					slowCount.Add(1)
				}
			}
		}()
		_, err = c.Produce(ctx, topic, 50, testcluster.ProduceOptions{Partition: 0, FirstSeq: n})
		require.NoError(t, err)
		time.Sleep(time.Second)
		require.LessOrEqual(t, slowCount.Load(), int64(0), "a paused partition delivers nothing")

		// A rebalance that keeps the partition here keeps the pause: a
		// partition added to the topic makes the member rebalance alone.
		gen := conn.Assignment().Generation
		require.NoError(t, c.AddPartitions(ctx, topic, 3))
		require.Eventually(t, func() bool {
			a := conn.Assignment()
			return a.Err == nil && a.Generation != gen
		}, time.Minute, 20*time.Millisecond)
		require.Equal(t, map[string][]int32{topic: {0}}, conn.Assignment().Paused)
		time.Sleep(500 * time.Millisecond)
		require.Zero(t, slowCount.Load(), "still paused after the rebalance")

		require.NoError(t, conn.Resume(p0))
		require.Empty(t, conn.Assignment().Paused)
		rs = slowCol.waitAll(t, 0, n+50, time.Minute)
		var p0rs []record
		for _, r := range rs {
			if r.Partition == 0 {
				p0rs = append(p0rs, r)
			}
		}
		checkOrder(t, p0rs)
		for seq, k := range distinct(p0rs) {
			require.Equal(t, 1, k, "message %d delivered %d times", seq, k)
		}
		stopSlow()
		slowCol.wg.Wait()
	})
}

// TestPauseForgottenWhenPartitionMoves: a pause belongs to the assignment;
// once the partition moves to another member, that member consumes it.
func TestPauseForgottenWhenPartitionMoves(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, c *testcluster.Cluster, config func(string) Config) {
		topic := newTopic(t, c, 2, 0)
		ctx := testwait.Context(t, 3*time.Minute)
		for p := range int32(2) {
			_, err := c.Produce(ctx, topic, 20, testcluster.ProduceOptions{Partition: p, FirstSeq: int(p) * 1000})
			require.NoError(t, err)
		}
		group := testcluster.UniqueName("g-pausemove")
		a := newConnector(t, config(group))
		_, err := a.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		all := []TopicPartition{{Topic: topic, Partition: 0}, {Topic: topic, Partition: 1}}
		require.NoError(t, a.Pause(all...))
		require.Equal(t, map[string][]int32{topic: {0, 1}}, a.Assignment().Paused)

		b := newConnector(t, config(group))
		bs, err := b.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		col := newCollector()
		col.read(ctx, "b", bs[topic][0])
		var kept, moved []int32
		require.Eventually(t, func() bool {
			as, bsA := a.Assignment(), b.Assignment()
			if as.Err != nil || bsA.Err != nil || len(as.Partitions[topic])+len(bsA.Partitions[topic]) != 2 {
				return false
			}
			kept, moved = as.Partitions[topic], bsA.Partitions[topic]
			return len(kept) == 1 && len(moved) == 1
		}, time.Minute, 20*time.Millisecond)
		require.Equal(t, map[string][]int32{topic: kept}, a.Assignment().Paused, "the kept partition stays paused")
		require.Empty(t, b.Assignment().Paused)
		col.waitAll(t, int(moved[0])*1000, 20, time.Minute)
		require.ErrorIs(t, a.Resume(TopicPartition{Topic: topic, Partition: moved[0]}), ErrNotOwner)
	})
}

// TestListenerCommitsThroughTheConnectorItIsGiven: a listener installed
// before New returns commits through the connector each call carries,
// made of functions with RebalanceListenerFuncs.
func TestListenerCommitsThroughTheConnectorItIsGiven(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, c *testcluster.Cluster, config func(string) Config) {
		topic := newTopic(t, c, 2, 20)
		group := testcluster.UniqueName("g-listener")
		cfg := config(group)
		cfg.AutoCommitEnable = false
		var starts atomic.Int32
		released := make(chan error, 4)
		l := RebalanceListenerFuncs{
			Releasing: func(ctx context.Context, conn *ConsumerConnector, owned map[string][]int32, lost bool) {
				if !lost {
					released <- conn.CommitOffsets(ctx)
				}
			},
			Starting: func(_ context.Context, _ *ConsumerConnector, gained map[string][]int32) {
				if len(gained[topic]) > 0 {
					starts.Add(1)
				}
			},
		}
		conn, err := New(t.Context(), cfg, WithRebalanceListener(l))
		require.NoError(t, err)
		ctx := testwait.Context(t, 3*time.Minute)
		streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		require.Positive(t, starts.Load())
		col := newCollector()
		col.read(ctx, "a", streams[topic][0])
		col.waitAll(t, 0, 20, time.Minute)
		require.Eventually(t, func() bool {
			total := int64(0)
			for _, p := range conn.Stats().Partitions {
				total += p.ConsumedOffset
			}
			return total == 20
		}, time.Minute, 20*time.Millisecond)
		shutdown(t, conn)
		col.wg.Wait()
		select {
		case err := <-released:
			require.NoError(t, err, "the listener's commit, during Shutdown's release")
		default:
			t.Fatal("the listener was not called before the partitions were released")
		}
		var committed map[int32]int64
		if cfg.kafkaMode() {
			committed = kafkaCommitted(t, c, group, topic, 2)
		} else {
			committed = readOffsets(t, c, group, topic, 2)
		}
		require.Equal(t, int64(20), committed[0]+committed[1], "committed %v", committed)
	})
}

// TestOwnershipReasons checks, without a cluster, the reason ownership
// reports for each state of the connector.
func TestOwnershipReasons(t *testing.T) {
	c := &ConsumerConnector{}
	_, _, err := c.ownership()
	assert.ErrorIs(t, err, ErrNotJoined)
	c.created = true
	_, _, err = c.ownership()
	assert.ErrorIs(t, err, ErrRebalanceInProgress)
	failed := fmt.Errorf("%w: after 4 attempts", ErrRebalanceFailed)
	c.mu.Lock()
	c.noteOwnership(errors.New("some other error"))
	c.mu.Unlock()
	_, _, err = c.ownership()
	assert.ErrorIs(t, err, ErrRebalanceInProgress, "errors that say nothing of ownership are not kept")
	c.mu.Lock()
	c.noteOwnership(failed)
	c.mu.Unlock()
	_, _, err = c.ownership()
	assert.ErrorIs(t, err, ErrRebalanceFailed)
	assert.ErrorIs(t, c.CommitOffsets(context.Background()), ErrRebalanceFailed)
	c.shutdown = true
	_, _, err = c.ownership()
	assert.ErrorIs(t, err, ErrShutdown)
}
