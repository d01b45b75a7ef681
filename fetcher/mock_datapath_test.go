package fetcher

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/stream"
)

// mockFixedFetch is one MockBroker leading partitions of topic "t" whose
// every fetch is answered with res, whatever offsets it asks for (the
// fetcher skips records below its fetch offset).
func mockFixedFetch(t *testing.T, res *sarama.FetchResponse, partitions ...int32) *sarama.MockBroker {
	mb := sarama.NewMockBroker(t, 0)
	t.Cleanup(mb.Close)
	md := sarama.NewMockMetadataResponse(t).SetBroker(mb.Addr(), 0)
	for _, p := range partitions {
		md.SetLeader("t", p, 0)
	}
	mb.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": mockAPIVersions(t),
		"MetadataRequest":    md,
		"FetchRequest":       sarama.NewMockWrapper(res),
	})
	mb.SetLatency(2 * time.Millisecond)
	return mb
}

// nextOrError reads s until it returns an error or ctx ends.
func nextOrError(ctx context.Context, s *stream.KafkaStream) ([]*stream.Message, error) {
	var got []*stream.Message
	for {
		msg, err := s.Next(ctx)
		if err != nil {
			return got, err
		}
		got = append(got, msg)
	}
}

// TestTooLargeInTheMiddleOfABatch: a batch sent whole (KIP-74) holds a
// message larger than the fetch size between small ones. The messages
// before it are delivered, then the stream reports ErrMessageTooLarge and
// the partition stops at the big message, instead of the request sent
// ahead guessing past it for ever.
func TestTooLargeInTheMiddleOfABatch(t *testing.T) {
	res := &sarama.FetchResponse{Version: 12}
	for o := range int64(11) {
		v := "m"
		if o == 5 {
			v = strings.Repeat("x", 4096)
		}
		res.AddRecord("t", 0, nil, sarama.StringEncoder(v), o)
	}
	blk := res.GetBlock("t", 0)
	blk.HighWaterMarkOffset = 11
	blk.RecordsSet[0].RecordBatch.LastOffsetDelta = 10
	mb := mockFixedFetch(t, res, 0)

	m := newManager(t, testConfig(t), StaticBrokers{{ID: 0, Addr: mb.Addr()}})
	s := newStream(t, 2)
	p := stream.NewPartitionTopicInfo("t", 0, s.Queue(), 0, 0, 1024)
	if err := m.StartConnections(context.Background(), []*stream.PartitionTopicInfo{p}); err != nil {
		t.Fatal(err)
	}
	defer m.StopConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := nextOrError(ctx, s)
	if want := []int64{0, 1, 2, 3, 4}; !equalOffsets(offsetsOf(got), want) {
		t.Errorf("delivered %v, want %v", offsetsOf(got), want)
	}
	var perr *stream.PartitionError
	if !errors.As(err, &perr) || !errors.Is(err, stream.ErrMessageTooLarge) || perr.Partition != 0 {
		t.Fatalf("got %v, want a PartitionError wrapping ErrMessageTooLarge", err)
	}
	if p.FetchedOffset() != 5 {
		t.Errorf("fetched offset %d, want 5 (the big message)", p.FetchedOffset())
	}
	// The partition is stopped: no more fetches for it.
	time.Sleep(100 * time.Millisecond)
	n := len(mb.History())
	time.Sleep(300 * time.Millisecond)
	if more := len(mb.History()) - n; more > 0 {
		t.Errorf("%d more requests to the broker after the partition stopped", more)
	}
}
