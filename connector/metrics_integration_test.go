package connector

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// recordingMetrics is a Metrics that keeps every event.
type recordingMetrics struct {
	attachErr error

	mu         sync.Mutex
	conn       *ConsumerConnector
	detached   int
	fetches    []FetchEvent
	rebalances []RebalanceEvent
	commits    []CommitEvent
}

func (m *recordingMetrics) Attach(c *ConsumerConnector) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.conn = c
	return m.attachErr
}

func (m *recordingMetrics) Detach() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.detached++
}

func (m *recordingMetrics) Fetch(e FetchEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fetches = append(m.fetches, e)
}

func (m *recordingMetrics) Rebalance(e RebalanceEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rebalances = append(m.rebalances, e)
}

func (m *recordingMetrics) Commit(e CommitEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.commits = append(m.commits, e)
}

func (m *recordingMetrics) commitsTo(store OffsetsStorage) []CommitEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []CommitEvent
	for _, e := range m.commits {
		if e.Store == store {
			out = append(out, e)
		}
	}
	return out
}

// TestMetricsReportRealNumbers consumes part of a topic with metrics on and
// checks the numbers against what was produced and read: the lag of each
// partition is what remains of it, message and byte counts match what the
// stream handed out, and fetches, the rebalance and commits are reported.
func TestMetricsReportRealNumbers(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	const n, k = 300, 100
	topic := newTopic(t, c, 3, n)
	rec := &recordingMetrics{}
	cfg := testConfig(c, testcluster.UniqueName("g-metrics"))
	cfg.AutoCommitInterval = time.Hour
	cfg.Metrics = rec
	conn := newConnector(t, cfg)
	require.Same(t, conn, rec.conn, "Attach is called by New")
	ctx := testwait.Context(t, 2*time.Minute)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	s := streams[topic][0]

	read := map[int32]int64{} // messages read per partition
	var bytes int64
	next := func() {
		m, err := s.Next(ctx)
		require.NoError(t, err)
		read[m.Partition]++
		bytes += int64(len(m.Key) + len(m.Value))
		s.MarkConsumed(m)
	}
	for range k {
		next()
	}

	// Every partition's high watermark comes with its fetch responses.
	var st Stats
	require.Eventually(t, func() bool {
		st = conn.Stats()
		if len(st.Partitions) != 3 {
			return false
		}
		var hw int64
		for _, p := range st.Partitions {
			hw += p.HighWatermark
		}
		return hw == n
	}, 30*time.Second, 10*time.Millisecond)
	require.Equal(t, cfg.GroupID, st.Group)
	require.Equal(t, cfg.GroupID, st.ClientID, "client.id defaults to the group")
	require.Equal(t, conn.ConsumerID(), st.ConsumerID)
	var lag, maxLag int64
	for _, p := range st.Partitions {
		require.Equal(t, topic, p.Topic)
		require.True(t, p.LagKnown)
		require.Equal(t, read[p.Partition], p.ConsumedOffset, "partition %d", p.Partition)
		require.Equal(t, p.HighWatermark-read[p.Partition], p.Lag, "lag of partition %d is what remains of it", p.Partition)
		lag += p.Lag
		maxLag = max(maxLag, p.Lag)
	}
	require.Equal(t, int64(n-k), lag)
	require.Equal(t, maxLag, st.MaxLag)
	require.Equal(t, []StreamStats{{Topic: topic, Thread: 0, QueuedChunks: st.Streams[0].QueuedChunks}}, st.Streams)
	require.Equal(t, SessionConnected, st.Session.State)
	require.Zero(t, st.Session.Disconnects)
	require.Greater(t, st.MinFetchRate, 0.0)

	rec.mu.Lock()
	require.NotEmpty(t, rec.fetches)
	for _, e := range rec.fetches {
		require.NoError(t, e.Err)
		require.Positive(t, e.Duration)
		require.Positive(t, e.Bytes)
		require.Contains(t, c.BrokerAddrs(), e.Addr)
	}
	require.NotEmpty(t, rec.rebalances)
	require.Equal(t, RebalanceSucceeded, rec.rebalances[0].Outcome)
	require.Positive(t, rec.rebalances[0].Duration)
	rec.mu.Unlock()

	require.NoError(t, conn.CommitOffsets(ctx))
	zk := rec.commitsTo(OffsetsStorageZooKeeper)
	require.Len(t, zk, 1)
	require.NoError(t, zk[0].Err)
	require.Equal(t, 3, zk[0].Partitions, "every owned partition: the unread ones move from no offset to 0")
	require.Positive(t, zk[0].Duration)

	// The rest; the iterator counts a chunk once it has left it.
	for range n - k {
		next()
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = s.Next(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	st = conn.Stats()
	require.Equal(t, []TopicStats{{Topic: topic, Messages: n, Bytes: bytes}}, st.Topics)
	require.Zero(t, st.MaxLag)
	require.Zero(t, st.FencedTime)

	require.NoError(t, conn.Shutdown(ctx))
	require.NoError(t, conn.Shutdown(ctx))
	rec.mu.Lock()
	require.Equal(t, 1, rec.detached, "Detach is called once, by the first Shutdown")
	rec.mu.Unlock()
}

// TestMetricsCommitsToKafka: with offsets.storage=kafka and
// dual.commit.enabled, every commit is reported once per store.
func TestMetricsCommitsToKafka(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 2, 20)
	rec := &recordingMetrics{}
	cfg := testConfig(c, testcluster.UniqueName("g-metrics-kafka"))
	cfg.AutoCommitInterval = time.Hour
	cfg.OffsetsStorage = OffsetsStorageKafka
	cfg.DualCommitEnabled = DualCommitOn
	cfg.Metrics = rec
	conn := newConnector(t, cfg)
	ctx := testwait.Context(t, 2*time.Minute)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	m, err := streams[topic][0].Next(ctx)
	require.NoError(t, err)
	streams[topic][0].MarkConsumed(m)
	require.NoError(t, conn.CommitOffsets(ctx))
	for _, store := range []OffsetsStorage{OffsetsStorageKafka, OffsetsStorageZooKeeper} {
		evs := rec.commitsTo(store)
		require.Len(t, evs, 1, "%s: %+v", store, evs)
		require.NoError(t, evs[0].Err, store)
		require.Equal(t, 2, evs[0].Partitions, store)
	}
	want := map[int32]int64{0: 0, 1: 0}
	want[m.Partition] = m.Offset + 1
	require.Equal(t, want, fetchKafkaOffsets(t, c, cfg.GroupID, topic, 2))
}

// TestMetricsAttachErrorFailsNew: a Metrics that refuses the connector
// makes New fail and leaves nothing running (goleak checks).
func TestMetricsAttachErrorFailsNew(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	boom := errors.New("already registered")
	cfg := testConfig(c, testcluster.UniqueName("g-metrics-refused"))
	cfg.Metrics = &recordingMetrics{attachErr: boom}
	_, err := New(t.Context(), cfg)
	require.ErrorIs(t, err, boom)
}

// Without Metrics nothing is counted, but Stats still reports offsets and
// lag.
func TestStatsWithoutMetrics(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 1, 10)
	conn := newConnector(t, testConfig(c, testcluster.UniqueName("g-stats")))
	ctx := testwait.Context(t, time.Minute)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	_, err = streams[topic][0].Next(ctx)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st := conn.Stats()
		return len(st.Partitions) == 1 && st.Partitions[0].LagKnown && st.Partitions[0].Lag == 10
	}, 30*time.Second, 10*time.Millisecond)
	st := conn.Stats()
	require.Empty(t, st.Topics)
	require.Zero(t, st.MinFetchRate)
}
