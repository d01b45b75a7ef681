package connector

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// memOffsets is a zkSession and an owner holding offset nodes in memory,
// whose lease always holds. Each call
// takes latency, and inFlight/maxInFlight count the calls under way.
type memOffsets struct {
	mu          sync.Mutex
	nodes       map[string]string
	err         error // returned by every Get when set
	latency     time.Duration
	inFlight    int
	maxInFlight int
}

func (m *memOffsets) call() func() {
	m.mu.Lock()
	m.inFlight++
	m.maxInFlight = max(m.maxInFlight, m.inFlight)
	m.mu.Unlock()
	time.Sleep(m.latency)
	return func() {
		m.mu.Lock()
		m.inFlight--
		m.mu.Unlock()
	}
}

func (m *memOffsets) Get(_ context.Context, path string) ([]byte, zksession.Stat, error) {
	defer m.call()()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, zksession.Stat{}, m.err
	}
	v, ok := m.nodes[path]
	if !ok {
		return nil, zksession.Stat{}, zksession.ErrNoNode
	}
	return []byte(v), zksession.Stat{}, nil
}

func (m *memOffsets) SetOrCreate(_ context.Context, path string, data []byte) error {
	defer m.call()()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nodes[path] = string(data)
	return nil
}

func (m *memOffsets) Held() bool               { return true }
func (m *memOffsets) Changed() <-chan struct{} { return nil }

// TestZKOffsetStorePipelines: the offsets of many partitions are read and
// written with the requests in flight together, not one round trip after
// another (400 partitions at 10 ms round trips took 4 s each way).
func TestZKOffsetStorePipelines(t *testing.T) {
	zk := &memOffsets{nodes: map[string]string{}, latency: 10 * time.Millisecond}
	s := &zkOffsetStore{zk: zk, group: "g"}
	offsets := map[zkutil.TopicPartition]int64{}
	for _, tp := range tps("t", 400) {
		offsets[tp] = int64(tp.Partition) * 7
	}
	start := time.Now()
	require.NoError(t, s.Commit(context.Background(), zk, offsets))
	read, unreadable, err := s.Fetch(context.Background(), tps("t", 400))
	took := time.Since(start)
	require.NoError(t, err)
	require.Empty(t, unreadable)
	require.Equal(t, offsets, read)
	t.Logf("400 partitions committed and read back in %v, up to %d requests in flight", took, zk.maxInFlight)
	require.Greater(t, zk.maxInFlight, 50, "requests were not sent together")
	require.Less(t, took, 2*time.Second, "commit and fetch took a round trip per partition")
}

func tps(topic string, n int32) []zkutil.TopicPartition {
	out := make([]zkutil.TopicPartition, n)
	for p := range n {
		out[p] = zkutil.TopicPartition{Topic: topic, Partition: p}
	}
	return out
}

// TestZKOffsetStoreUnreadablePartition: a garbage offset node makes only
// its partition unreadable, with an error naming the node and the value;
// the other partitions are read. A failure of ZooKeeper itself still fails
// the whole fetch.
func TestZKOffsetStoreUnreadablePartition(t *testing.T) {
	path := func(p int32) string { return zkutil.OffsetPath("g", "t", p) }
	zk := &memOffsets{nodes: map[string]string{path(0): "12", path(1): "abc", path(2): "-5", path(4): "-1"}}
	s := &zkOffsetStore{zk: zk, group: "g"}
	offsets, unreadable, err := s.Fetch(context.Background(), tps("t", 5))
	require.NoError(t, err)
	require.Equal(t, map[zkutil.TopicPartition]int64{{Topic: "t", Partition: 0}: 12, {Topic: "t", Partition: 3}: -1, {Topic: "t", Partition: 4}: -1}, offsets)
	require.Len(t, unreadable, 2)
	for p, value := range map[int32]string{1: `"abc"`, 2: "-5"} {
		err := unreadable[zkutil.TopicPartition{Topic: "t", Partition: p}]
		var de *zkutil.DecodeError
		require.True(t, errors.As(err, &de), "%v", err)
		require.Equal(t, path(p), de.Path)
		require.ErrorContains(t, err, value)
	}

	zk.err = zksession.ErrConnectionLoss
	_, _, err = s.Fetch(context.Background(), tps("t", 5))
	require.ErrorIs(t, err, zksession.ErrConnectionLoss)
}

// TestDualOffsetStoreUnreadablePartition: with dual commit, a partition
// unreadable in either store is unreadable; the others get the larger
// offset.
func TestDualOffsetStoreUnreadablePartition(t *testing.T) {
	path := func(p int32) string { return zkutil.OffsetPath("g", "t", p) }
	kafka := &zkOffsetStore{zk: &memOffsets{nodes: map[string]string{path(0): "5", path(1): "7", path(2): "x"}}, group: "g"}
	zk := &zkOffsetStore{zk: &memOffsets{nodes: map[string]string{path(0): "9", path(1): "y", path(2): "3"}}, group: "g"}
	s := &dualOffsetStore{kafka: kafka, zk: zk}
	offsets, unreadable, err := s.Fetch(context.Background(), tps("t", 4))
	require.NoError(t, err)
	require.Equal(t, map[zkutil.TopicPartition]int64{{Topic: "t", Partition: 0}: 9, {Topic: "t", Partition: 3}: -1}, offsets)
	require.Len(t, unreadable, 2)
	require.ErrorContains(t, unreadable[zkutil.TopicPartition{Topic: "t", Partition: 1}], `"y"`)
	require.ErrorContains(t, unreadable[zkutil.TopicPartition{Topic: "t", Partition: 2}], `"x"`)
}
