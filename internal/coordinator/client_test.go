package coordinator

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// mockCoordinator starts a sarama MockBroker that is the whole cluster and
// the coordinator of group, answering OffsetFetch with fetches in turn
// (the last one for good), and returns a Client of group connected to it
// (3 retries, 10 ms apart). It checks protocol logic only; the behaviour
// against Kafka is in the integration tests.
func mockCoordinator(t *testing.T, group string, fetches ...any) *Client {
	t.Helper()
	mb := sarama.NewMockBroker(t, 1)
	t.Cleanup(mb.Close)
	mb.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
			{ApiKey: 3, MinVersion: 0, MaxVersion: 5}, {ApiKey: 8, MinVersion: 0, MaxVersion: 3}, {ApiKey: 9, MinVersion: 0, MaxVersion: 5}, {ApiKey: 10, MinVersion: 0, MaxVersion: 2},
			{ApiKey: 15, MinVersion: 0, MaxVersion: 1}, {ApiKey: 18, MinVersion: 0, MaxVersion: 2},
		}),
		"MetadataRequest":        sarama.NewMockMetadataResponse(t).SetBroker(mb.Addr(), mb.BrokerID()),
		"FindCoordinatorRequest": sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, group, mb),
		"OffsetFetchRequest":     sarama.NewMockSequence(fetches...),
	})
	s := New(group, func() (sarama.Client, error) {
		sc := sarama.NewConfig()
		sc.Version = sarama.V0_10_2_0
		sc.Metadata.Full = false
		return sarama.NewClient([]string{mb.Addr()}, sc)
	}, 3, 10*time.Millisecond)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestFetchPartitionErrors: an error Kafka reports for one
// partition makes only that partition unreadable, while coordinator errors,
// which version 1 reports per partition too, retry the whole request.
func TestFetchPartitionErrors(t *testing.T) {
	const group = "g"
	notCoordinator := sarama.NewMockOffsetFetchResponse(t).
		SetOffset(group, "t", 0, -1, "", sarama.ErrNotCoordinatorForConsumer).
		SetOffset(group, "t", 1, -1, "", sarama.ErrNotCoordinatorForConsumer)
	answer := sarama.NewMockOffsetFetchResponse(t).
		SetOffset(group, "t", 0, 42, "", sarama.ErrNoError).
		SetOffset(group, "t", 1, -1, "", sarama.ErrUnknownTopicOrPartition)
	s := mockCoordinator(t, group, notCoordinator, answer)
	start := time.Now()
	offsets, unreadable, err := s.Fetch(context.Background(), []zkutil.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}, {Topic: "t", Partition: 2}})
	require.Less(t, time.Since(start), 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, map[zkutil.TopicPartition]int64{{Topic: "t", Partition: 0}: 42, {Topic: "t", Partition: 2}: -1}, offsets)
	require.Len(t, unreadable, 1)
	err = unreadable[zkutil.TopicPartition{Topic: "t", Partition: 1}]
	require.ErrorIs(t, err, sarama.ErrUnknownTopicOrPartition)
	require.ErrorContains(t, err, "t-1")
}

// TestFetchConfirmsNoOffset: a coordinator that resigns while it answers
// says "no committed offset" without an error for a group that has
// offsets (the chaos suite met it during a coordinator move: the new owner
// started from an older position). An answer of "none" is asked again, of
// the coordinator looked up again, and the second answer counts.
func TestFetchConfirmsNoOffset(t *testing.T) {
	const group = "g"
	unloaded := sarama.NewMockOffsetFetchResponse(t).
		SetOffset(group, "t", 0, -1, "", sarama.ErrNoError).
		SetOffset(group, "t", 1, 7, "", sarama.ErrNoError)
	loaded := sarama.NewMockOffsetFetchResponse(t).
		SetOffset(group, "t", 0, 42, "", sarama.ErrNoError).
		SetOffset(group, "t", 1, 7, "", sarama.ErrNoError)
	s := mockCoordinator(t, group, unloaded, loaded)
	tps := []zkutil.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}
	offsets, unreadable, err := s.Fetch(context.Background(), tps)
	require.NoError(t, err)
	require.Empty(t, unreadable)
	require.Equal(t, map[zkutil.TopicPartition]int64{tps[0]: 42, tps[1]: 7}, offsets)

	// A group that really has none keeps answering none.
	offsets, _, err = s.Fetch(context.Background(), []zkutil.TopicPartition{{Topic: "t", Partition: 5}})
	require.NoError(t, err)
	require.Equal(t, map[zkutil.TopicPartition]int64{{Topic: "t", Partition: 5}: -1}, offsets)
}
