package connector

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestLagGrowsWhileTheApplicationStalls: the application reads a few
// messages and stops; the stream's queue fills and the fetcher blocks, so
// no fetch response brings a newer high watermark. Messages keep coming,
// and the lag Stats reports keeps growing with them (read from the leader
// by the lag refresh), as the group tool's would; LagTime grows with the
// wall clock; and once the application reads again everything falls back
// to zero. Without the refresh (WithLagRefresh(200*time.Millisecond)) the lag stayed where
// the fetcher stopped.
func TestLagGrowsWhileTheApplicationStalls(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	const batches, batch, more, read = 20, 30, 1500, 40
	const first = batches * batch
	topic := newTopic(t, c, 1, 0)
	// Many small batches, so that a fetch of 4 KiB takes one or two.
	for i := range batches {
		_, err := c.Produce(ctx, topic, batch, testcluster.ProduceOptions{Partition: 0, ValueSize: 100, FirstSeq: i * batch})
		require.NoError(t, err)
	}

	cfg := testConfig(c, testcluster.UniqueName("g-lag-stall"))
	// A queue of one small chunk: the fetcher blocks after a few fetches.
	cfg.QueuedMaxMessageChunks = 1
	cfg.FetchMessageMaxBytes = 4096
	conn := newConnector(t, cfg, WithLagRefresh(200*time.Millisecond))
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	s := streams[topic][0]
	for range read {
		m, err := s.Next(ctx)
		require.NoError(t, err)
		s.MarkConsumed(m)
	}

	// The application stalls; the fetcher fills the queue and stops.
	partition := func() PartitionStats {
		if st := conn.Stats(); len(st.Partitions) == 1 {
			return st.Partitions[0]
		}
		return PartitionStats{} // between generations: not expected here
	}
	var blockedAt int64
	require.Eventually(t, func() bool {
		before := partition().FetchedOffset
		time.Sleep(500 * time.Millisecond)
		p := partition()
		blockedAt = p.FetchedOffset
		return blockedAt == before && blockedAt < first && conn.Stats().Streams[0].QueuedChunks == 1
	}, time.Minute, 10*time.Millisecond, "the fetcher blocks on the full queue")
	require.Equal(t, int64(read), partition().ConsumedOffset)
	require.Eventually(t, func() bool { return partition().Lag == first-read }, 30*time.Second, 10*time.Millisecond)

	// Messages keep coming: the lag grows with them, while the fetcher
	// stays where it was.
	_, err = c.Produce(ctx, topic, more, testcluster.ProduceOptions{Partition: 0, ValueSize: 100, FirstSeq: first})
	require.NoError(t, err)
	var p PartitionStats
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p = partition()
		assert.Equal(c, int64(first+more-read), p.Lag, "lag follows the log end: %+v", p)
	}, 30*time.Second, 10*time.Millisecond)
	require.True(t, p.LagKnown)
	require.Equal(t, int64(first+more), p.HighWatermark)
	require.Equal(t, blockedAt, p.FetchedOffset, "the fetcher was blocked all along: the lag came from the refresh")
	require.Less(t, p.HighWatermarkAge, 5*time.Second, "the log end is read again and again")
	st := conn.Stats()
	require.Equal(t, int64(first+more-read), st.MaxLag)
	require.Equal(t, 200*time.Millisecond, st.LagRefresh)

	// The time lag grows with the clock while nothing is consumed.
	t1, w1 := partition().LagTime, time.Now()
	require.Positive(t, t1)
	time.Sleep(1500 * time.Millisecond)
	t2, w2 := partition().LagTime, time.Now()
	require.InDelta(t, w2.Sub(w1).Seconds(), (t2 - t1).Seconds(), 0.25, "LagTime %v then %v", t1, t2)
	require.GreaterOrEqual(t, conn.Stats().MaxLagTime, t2)

	// The application reads everything: lag and time lag fall to zero.
	for range first + more - read {
		m, err := s.Next(ctx)
		require.NoError(t, err)
		s.MarkConsumed(m)
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p = partition()
		assert.True(c, p.LagKnown && p.Lag == 0 && p.LagTime == 0, "%+v", p)
	}, 30*time.Second, 10*time.Millisecond)
	require.Zero(t, conn.Stats().MaxLagTime)
}

// TestLagRefreshGoesThroughTheDialer: the lag refresh's connections to the
// leaders are made by the application's dialer too (WithDialer), like
// every other connection of the connector; the socket watch of
// TestWithDialerCarriesEveryConnection fails on any it did not make.
func TestLagRefreshGoesThroughTheDialer(t *testing.T) {
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	topic := newTopic(t, c, 2, 10)
	zk := strings.Split(c.ZKServer(), ",")
	d := newRecordingDialer()
	w := watchSockets(t, append(slices.Clone(zk), c.BrokerAddrs()...))
	conn, err := New(ctx, testConfig(c, testcluster.UniqueName("g-lag-dial")), WithDialer(d), WithLagRefresh(100*time.Millisecond))
	require.NoError(t, err)
	_, err = conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	// Owned for a second and read from the leader a moment ago: the
	// refresh has run, through its own connection.
	start := time.Now()
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		st := conn.Stats()
		assert.Len(ct, st.Partitions, 2)
		for _, p := range st.Partitions {
			assert.Less(ct, p.HighWatermarkAge, 500*time.Millisecond, "%+v", p)
		}
		assert.Greater(ct, time.Since(start), time.Second)
	}, time.Minute, 20*time.Millisecond)
	require.NoError(t, conn.Shutdown(ctx))
	checkEveryConnection(t, w, d, zk, c.BrokerAddrs())
}
