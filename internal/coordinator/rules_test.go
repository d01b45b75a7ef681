package coordinator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// apiKeys is what the mock brokers of these tests speak, as Kafka 2.x
// does; offsetCommit is OffsetCommit's range.
func apiKeys(t *testing.T, offsetCommit Range) *sarama.MockApiVersionsResponse {
	return sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
		{ApiKey: 3, MinVersion: 0, MaxVersion: 5}, {ApiKey: 8, MinVersion: offsetCommit.Min, MaxVersion: offsetCommit.Max},
		{ApiKey: 9, MinVersion: 0, MaxVersion: 5}, {ApiKey: 10, MinVersion: 0, MaxVersion: 2},
		{ApiKey: 15, MinVersion: 0, MaxVersion: 1}, {ApiKey: 18, MinVersion: 0, MaxVersion: 2},
	})
}

func mockClient(t *testing.T, group string, bootstrap *sarama.MockBroker) *Client {
	s := New(group, func() (sarama.Client, error) {
		sc := sarama.NewConfig()
		sc.Version = sarama.V2_1_0_0
		sc.Metadata.Full = false
		return sarama.NewClient([]string{bootstrap.Addr()}, sc)
	}, 3, 10*time.Millisecond)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// count returns how many requests of type T mb received.
func count[T any](mb *sarama.MockBroker) int {
	n := 0
	for _, rr := range mb.History() {
		if _, ok := rr.Request.(T); ok {
			n++
		}
	}
	return n
}

// TestCoordinatorMovesMidRequest: the coordinator resigns while a commit
// and a fetch are under way (NOT_COORDINATOR); the Client drops its
// connection, asks FindCoordinator again, and repeats both requests to
// the new coordinator, which answers.
func TestCoordinatorMovesMidRequest(t *testing.T) {
	const group = "g"
	oldC, newC := sarama.NewMockBroker(t, 1), sarama.NewMockBroker(t, 2)
	t.Cleanup(oldC.Close)
	t.Cleanup(newC.Close)
	tp := zkutil.TopicPartition{Topic: "t", Partition: 0}
	oldC.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": apiKeys(t, Range{0, 8}),
		"MetadataRequest":    sarama.NewMockMetadataResponse(t).SetBroker(oldC.Addr(), oldC.BrokerID()).SetBroker(newC.Addr(), newC.BrokerID()),
		"FindCoordinatorRequest": sarama.NewMockSequence(
			sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, group, oldC),
			sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, group, newC)),
		"OffsetCommitRequest": sarama.NewMockOffsetCommitResponse(t).SetError(group, "t", 0, sarama.ErrNotCoordinatorForConsumer),
		"OffsetFetchRequest":  sarama.NewMockOffsetFetchResponse(t).SetOffset(group, "t", 0, 1, "", sarama.ErrNotCoordinatorForConsumer),
	})
	newC.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest":  apiKeys(t, Range{0, 8}),
		"OffsetCommitRequest": sarama.NewMockOffsetCommitResponse(t).SetError(group, "t", 0, sarama.ErrNoError),
		"OffsetFetchRequest":  sarama.NewMockOffsetFetchResponse(t).SetOffset(group, "t", 0, 42, "", sarama.ErrNoError),
	})
	c := mockClient(t, group, oldC)
	ctx := context.Background()
	require.NoError(t, c.Commit(ctx, map[zkutil.TopicPartition]int64{tp: 42}))
	got, failed, err := c.Fetch(ctx, []zkutil.TopicPartition{tp})
	require.NoError(t, err)
	require.Empty(t, failed)
	require.Equal(t, map[zkutil.TopicPartition]int64{tp: 42}, got)
	require.Equal(t, 1, count[*sarama.OffsetCommitRequest](oldC), "one commit to the old coordinator")
	require.Equal(t, 1, count[*sarama.OffsetCommitRequest](newC), "repeated to the new one")
	require.Equal(t, 0, count[*sarama.OffsetFetchRequest](oldC), "the fetch went to the coordinator found last")
	require.Equal(t, 2, count[*sarama.FindCoordinatorRequest](oldC))
}

// TestCoordinatorTooNewForTheClient: a coordinator whose ApiVersions
// lacks the version a request needs (OffsetCommit 2: this broker speaks
// 3 and up, as Kafka 4 dropped the oldest versions) fails the request at
// once, without a retry, with an error that names the broker and the
// API; nothing is sent in a version the broker does not speak.
func TestCoordinatorTooNewForTheClient(t *testing.T) {
	const group = "g"
	mb := sarama.NewMockBroker(t, 7)
	t.Cleanup(mb.Close)
	mb.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest":     apiKeys(t, Range{3, 9}),
		"MetadataRequest":        sarama.NewMockMetadataResponse(t).SetBroker(mb.Addr(), mb.BrokerID()),
		"FindCoordinatorRequest": sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, group, mb),
		"OffsetCommitRequest":    sarama.NewMockOffsetCommitResponse(t).SetError(group, "t", 0, sarama.ErrNoError),
	})
	c := mockClient(t, group, mb)
	err := c.Commit(context.Background(), map[zkutil.TopicPartition]int64{{Topic: "t", Partition: 0}: 1})
	require.ErrorIs(t, err, ErrUnsupportedVersion)
	var ue *UnsupportedError
	require.True(t, errors.As(err, &ue))
	require.Equal(t, APIOffsetCommit, ue.API)
	require.Contains(t, err.Error(), fmt.Sprintf("broker 7 at %s speaks OffsetCommit versions 3-9, this client needs 2", mb.Addr()))
	require.Equal(t, 0, count[*sarama.OffsetCommitRequest](mb))
	require.Equal(t, 1, count[*sarama.FindCoordinatorRequest](mb), "no retry")
}

// TestRetryRule: the one retry rule: Kafka errors by grouperr, Permanent
// marks, every other error (a lost connection) repeated; attempts bound
// the tries and the context ends them.
func TestRetryRule(t *testing.T) {
	for _, tc := range []struct {
		err       error
		retriable bool
	}{
		{nil, false},
		{sarama.ErrNotCoordinatorForConsumer, true},
		{fmt.Errorf("wrapped: %w", sarama.ErrOffsetsLoadInProgress), true},
		{sarama.ErrIllegalGeneration, false},
		{sarama.ErrGroupAuthorizationFailed, false},
		{io.EOF, true},
		{Permanent(io.EOF), false},
		{Permanent(sarama.ErrNotCoordinatorForConsumer), false},
	} {
		require.Equal(t, tc.retriable, Retriable(tc.err), "%v", tc.err)
	}
	require.True(t, Moved(io.EOF), "a lost connection finds the coordinator again")
	require.True(t, Moved(sarama.ErrConsumerCoordinatorNotAvailable))
	require.False(t, Moved(sarama.ErrOffsetsLoadInProgress), "a loading coordinator is asked again")
	require.False(t, Moved(Permanent(io.EOF)))

	ctx := context.Background()
	tries := 0
	err := Retry(ctx, 3, time.Millisecond, func() error { tries++; return io.EOF })
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, 3, tries)

	tries = 0
	err = Retry(ctx, 3, time.Millisecond, func() error { tries++; return Permanent(sarama.ErrNotCoordinatorForConsumer) })
	require.Equal(t, sarama.ErrNotCoordinatorForConsumer, err, "unmarked")
	require.Equal(t, 1, tries)

	tries = 0
	err = Retry(ctx, 0, time.Millisecond, func() error {
		if tries++; tries < 5 {
			return sarama.ErrOffsetsLoadInProgress
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 5, tries, "0 attempts: until it succeeds")

	cctx, cancel := context.WithCancelCause(ctx)
	stop := errors.New("stop")
	err = Retry(cctx, 0, time.Millisecond, func() error { cancel(stop); return io.EOF })
	require.ErrorIs(t, err, stop)
	require.ErrorIs(t, err, io.EOF)
}
