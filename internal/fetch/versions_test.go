package fetch

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestFetchVersions: the fetcher's own Fetch requests and response parsing
// at every version a broker may settle on, against sarama's MockBroker,
// which decodes the request and encodes the response with sarama's code
// (message sets before v4, record batches from v4 on).
func TestFetchVersions(t *testing.T) {
	for _, v := range []int16{0, 1, 2, 3, 4, 5, 7, 9, 11, 12} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			mb := sarama.NewMockBroker(t, 0)
			t.Cleanup(mb.Close)
			fetch := sarama.NewMockFetchResponse(t, 3)
			for o := range int64(20) {
				fetch.SetMessage("t", 0, o, sarama.StringEncoder(fmt.Sprintf("m%d", o)))
			}
			fetch.SetHighWaterMark("t", 0, 20)
			mb.SetHandlerByMap(map[string]sarama.MockResponse{
				"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
					{ApiKey: 1, MinVersion: 0, MaxVersion: v},
					{ApiKey: 2, MinVersion: 0, MaxVersion: 1},
					{ApiKey: 3, MinVersion: 0, MaxVersion: 11},
					{ApiKey: 18, MinVersion: 0, MaxVersion: 3},
				}),
				"MetadataRequest": sarama.NewMockMetadataResponse(t).SetBroker(mb.Addr(), 0).SetLeader("t", 0, 0),
				"FetchRequest":    fetch,
			})
			mb.SetLatency(2 * time.Millisecond)
			m := newManager(t, testConfig(t), staticBrokers{{ID: 0, Addr: mb.Addr()}})
			s := newStream(t, 2)
			p := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 5, 5, 1<<20)
			if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p}); err != nil {
				t.Fatal(err)
			}
			defer m.StopConnections()
			c := collect(s)
			testwait.WaitFor(t, 10*time.Second, func() bool { return c.count() == 15 }, "15 messages")
			for i, msg := range c.stop() {
				if msg.Offset != int64(5+i) || string(msg.Value) != fmt.Sprintf("m%d", 5+i) {
					t.Fatalf("message %d: %d %q", i, msg.Offset, msg.Value)
				}
			}
			for _, rr := range mb.History() {
				if req, ok := rr.Request.(*sarama.FetchRequest); ok && req.Version != v {
					t.Fatalf("fetch request v%d, want v%d", req.Version, v)
				}
			}
		})
	}
}
