package kafkagroup

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
// (the last one for good), and a Member of group that bootstraps from it.
// It checks protocol logic only; the behaviour against Kafka is in the
// integration tests.
func mockCoordinator(t *testing.T, group string, fetches ...any) (*sarama.MockBroker, *Member) {
	t.Helper()
	mb := sarama.NewMockBroker(t, 1)
	t.Cleanup(mb.Close)
	mb.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest":     apiVersions(t),
		"MetadataRequest":        sarama.NewMockMetadataResponse(t).SetBroker(mb.Addr(), mb.BrokerID()),
		"FindCoordinatorRequest": sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, group, mb),
		"OffsetFetchRequest":     sarama.NewMockSequence(fetches...),
	})
	m, err := New(Config{Brokers: []string{mb.Addr()}, Group: group, Topics: []string{"t"},
		RetryBackoff: 10 * time.Millisecond, RequestTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return mb, m
}

// apiVersions answers ApiVersions with the requests Fetch sends
// (Metadata, OffsetFetch v5, FindCoordinator v2, ApiVersions) and the
// other requests a member sends to its coordinator, whose versions it
// negotiates when it connects (as Kafka 2.4 speaks them, JoinGroup up
// to 6: no v9).
func apiVersions(t *testing.T) *sarama.MockApiVersionsResponse {
	return sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
		{ApiKey: 3, MinVersion: 0, MaxVersion: 9}, {ApiKey: 8, MinVersion: 0, MaxVersion: 8}, {ApiKey: 9, MinVersion: 0, MaxVersion: 5},
		{ApiKey: 10, MinVersion: 0, MaxVersion: 2}, {ApiKey: 11, MinVersion: 0, MaxVersion: 6}, {ApiKey: 12, MinVersion: 0, MaxVersion: 4},
		{ApiKey: 13, MinVersion: 0, MaxVersion: 4}, {ApiKey: 14, MinVersion: 0, MaxVersion: 4}, {ApiKey: 18, MinVersion: 0, MaxVersion: 3},
	})
}

// requests lists the kinds of requests mb received, in order, leaving out
// ApiVersions and Metadata.
func requests(mb *sarama.MockBroker) []string {
	var out []string
	for _, rr := range mb.History() {
		switch rr.Request.(type) {
		case *sarama.OffsetFetchRequest:
			out = append(out, "OffsetFetch")
		case *sarama.FindCoordinatorRequest:
			out = append(out, "FindCoordinator")
		}
	}
	return out
}

// resignedThenLoaded are a coordinator's two answers to an OffsetFetch of
// t-0 and t-1 while it moves: "none" for t-0 (it resigned while reading),
// then 42; t-1 has 7 in both.
func resignedThenLoaded(t *testing.T, group string) (unloaded, loaded *sarama.MockOffsetFetchResponse) {
	unloaded = sarama.NewMockOffsetFetchResponse(t).
		SetOffset(group, "t", 0, -1, "", sarama.ErrNoError).
		SetOffset(group, "t", 1, 7, "", sarama.ErrNoError)
	loaded = sarama.NewMockOffsetFetchResponse(t).
		SetOffset(group, "t", 0, 42, "", sarama.ErrNoError).
		SetOffset(group, "t", 1, 7, "", sarama.ErrNoError)
	return unloaded, loaded
}

// TestFetchConfirmsNoOffset: a coordinator that resigns while it answers
// an OffsetFetch says "no committed offset" without an error for a group
// that has offsets (Kafka's coordinator checks that it coordinates the
// group, then reads its offsets; the chaos suite met it during a
// coordinator move); taken at face value, the partition's new owner would
// start from auto.offset.reset. An answer of "none" is asked again, after
// the coordinator is looked up again, and the second answer counts.
func TestFetchConfirmsNoOffset(t *testing.T) {
	const group = "g"
	unloaded, loaded := resignedThenLoaded(t, group)
	mb, m := mockCoordinator(t, group, unloaded, loaded)
	tps := []zkutil.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}
	offsets, err := m.Fetch(context.Background(), tps)
	require.NoError(t, err)
	require.Equal(t, map[zkutil.TopicPartition]int64{tps[0]: 42, tps[1]: 7}, offsets)
	require.Equal(t, []string{"FindCoordinator", "OffsetFetch", "FindCoordinator", "OffsetFetch"}, requests(mb))

	// Every partition with an offset: one OffsetFetch is enough.
	offsets, err = m.Fetch(context.Background(), tps)
	require.NoError(t, err)
	require.Equal(t, map[zkutil.TopicPartition]int64{tps[0]: 42, tps[1]: 7}, offsets)
	require.Len(t, requests(mb), 5)
}

// TestFetchNoOffsetTwice: a partition that has no committed offset, asked
// twice, is reported as having none (zkutil.NoOffset), the others with
// their offsets.
func TestFetchNoOffsetTwice(t *testing.T) {
	const group = "g"
	none := sarama.NewMockOffsetFetchResponse(t).
		SetOffset(group, "t", 0, -1, "", sarama.ErrNoError).
		SetOffset(group, "t", 1, 7, "", sarama.ErrNoError)
	mb, m := mockCoordinator(t, group, none)
	tps := []zkutil.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}, {Topic: "t", Partition: 2}}
	offsets, err := m.Fetch(context.Background(), tps)
	require.NoError(t, err)
	require.Equal(t, map[zkutil.TopicPartition]int64{tps[0]: zkutil.NoOffset, tps[1]: 7, tps[2]: zkutil.NoOffset}, offsets)
	require.Equal(t, []string{"FindCoordinator", "OffsetFetch", "FindCoordinator", "OffsetFetch"}, requests(mb))

	// The coordinator looked up again is the same broker: its connections
	// (a heartbeat may be in flight on them) are kept.
	c := currentCoordinator(m)
	require.NotNil(t, c)
	offsets, err = m.Fetch(context.Background(), tps[:1])
	require.NoError(t, err)
	require.Equal(t, map[zkutil.TopicPartition]int64{tps[0]: zkutil.NoOffset}, offsets)
	require.Len(t, requests(mb), 7)
	require.Same(t, c, currentCoordinator(m))
}

func currentCoordinator(m *Member) *coordinator {
	m.coordMu.Lock()
	defer m.coordMu.Unlock()
	return m.coord
}

// TestFetchConfirmsNoOffsetWithTheNewCoordinator: the coordinator moves
// while it answers "none"; looked up again, the new one is asked, and its
// answer counts.
func TestFetchConfirmsNoOffsetWithTheNewCoordinator(t *testing.T) {
	const group = "g"
	unloaded, loaded := resignedThenLoaded(t, group)
	next := sarama.NewMockBroker(t, 2)
	t.Cleanup(next.Close)
	next.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": apiVersions(t),
		"OffsetFetchRequest": loaded,
	})
	first, m := mockCoordinator(t, group, unloaded)
	// The first coordinator names the next one when looked up again.
	first.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": apiVersions(t),
		"MetadataRequest":    sarama.NewMockMetadataResponse(t).SetBroker(first.Addr(), first.BrokerID()),
		"FindCoordinatorRequest": sarama.NewMockSequence(
			sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, group, first),
			sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, group, next)),
		"OffsetFetchRequest": unloaded,
	})
	tps := []zkutil.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}
	offsets, err := m.Fetch(context.Background(), tps)
	require.NoError(t, err)
	require.Equal(t, map[zkutil.TopicPartition]int64{tps[0]: 42, tps[1]: 7}, offsets)
	require.Equal(t, []string{"FindCoordinator", "OffsetFetch", "FindCoordinator", "FindCoordinator"}, requests(first))
	require.Equal(t, []string{"OffsetFetch"}, requests(next))
	require.Equal(t, int32(2), currentCoordinator(m).id)
}
