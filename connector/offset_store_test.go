package connector

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// memOffsets is a zkSession holding offset nodes in memory.
type memOffsets struct {
	nodes map[string]string
	err   error // returned by every Get when set
}

func (m *memOffsets) Get(_ context.Context, path string) ([]byte, zkutil.Stat, error) {
	if m.err != nil {
		return nil, zkutil.Stat{}, m.err
	}
	v, ok := m.nodes[path]
	if !ok {
		return nil, zkutil.Stat{}, zkutil.ErrNoNode
	}
	return []byte(v), zkutil.Stat{}, nil
}

func (m *memOffsets) SetOrCreate(_ context.Context, path string, data []byte) error {
	m.nodes[path] = string(data)
	return nil
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

	zk.err = zkutil.ErrConnectionLoss
	_, _, err = s.Fetch(context.Background(), tps("t", 5))
	require.ErrorIs(t, err, zkutil.ErrConnectionLoss)
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

// TestKafkaOffsetStorePartitionErrors: an error Kafka reports for one
// partition makes only that partition unreadable, while coordinator errors,
// which version 1 reports per partition too, retry the whole request.
func TestKafkaOffsetStorePartitionErrors(t *testing.T) {
	mb := sarama.NewMockBroker(t, 1)
	defer mb.Close()
	const group = "g"
	notCoordinator := sarama.NewMockOffsetFetchResponse(t).
		SetOffset(group, "t", 0, -1, "", sarama.ErrNotCoordinatorForConsumer).
		SetOffset(group, "t", 1, -1, "", sarama.ErrNotCoordinatorForConsumer)
	answer := sarama.NewMockOffsetFetchResponse(t).
		SetOffset(group, "t", 0, 42, "", sarama.ErrNoError).
		SetOffset(group, "t", 1, -1, "", sarama.ErrUnknownTopicOrPartition)
	mb.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
			{ApiKey: 3, MinVersion: 0, MaxVersion: 5}, {ApiKey: 9, MinVersion: 0, MaxVersion: 5}, {ApiKey: 10, MinVersion: 0, MaxVersion: 2},
		}),
		"MetadataRequest":        sarama.NewMockMetadataResponse(t).SetBroker(mb.Addr(), mb.BrokerID()),
		"FindCoordinatorRequest": sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, group, mb),
		"OffsetFetchRequest":     sarama.NewMockSequence(notCoordinator, answer),
	})
	s := &kafkaOffsetStore{group: group, retries: 3, backoff: 10 * time.Millisecond, newClient: func() (sarama.Client, error) {
		sc := sarama.NewConfig()
		sc.Version = sarama.V0_10_2_0
		sc.Metadata.Full = false
		return sarama.NewClient([]string{mb.Addr()}, sc)
	}}
	defer s.Close()
	start := time.Now()
	offsets, unreadable, err := s.Fetch(context.Background(), tps("t", 3))
	require.Less(t, time.Since(start), 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, map[zkutil.TopicPartition]int64{{Topic: "t", Partition: 0}: 42, {Topic: "t", Partition: 2}: -1}, offsets)
	require.Len(t, unreadable, 1)
	err = unreadable[zkutil.TopicPartition{Topic: "t", Partition: 1}]
	require.ErrorIs(t, err, sarama.ErrUnknownTopicOrPartition)
	require.ErrorContains(t, err, "t-1")
}
