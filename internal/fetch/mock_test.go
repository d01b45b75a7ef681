package fetch

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// These tests use sarama's MockBroker for the manager's own logic
// (lifecycle, interruption, error reporting). Behaviour against Kafka is
// proven by the integration tests.

func mockAPIVersions(t *testing.T) *sarama.MockApiVersionsResponse {
	return sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
		{ApiKey: 1, MinVersion: 0, MaxVersion: 12},
		{ApiKey: 2, MinVersion: 0, MaxVersion: 6},
		{ApiKey: 3, MinVersion: 0, MaxVersion: 11},
		{ApiKey: 18, MinVersion: 0, MaxVersion: 3},
	})
}

// mockCluster is one MockBroker leading partitions 0..n-1 of topic "t",
// which hold messages 0..msgs-1.
func mockCluster(t *testing.T, partitions int32, msgs int64) *sarama.MockBroker {
	mb := sarama.NewMockBroker(t, 0)
	t.Cleanup(mb.Close)
	md := sarama.NewMockMetadataResponse(t).SetBroker(mb.Addr(), 0)
	fetch := sarama.NewMockFetchResponse(t, 3)
	offsets := sarama.NewMockOffsetResponse(t)
	for p := range partitions {
		md.SetLeader("t", p, 0)
		for o := range msgs {
			fetch.SetMessage("t", p, o, sarama.StringEncoder("m"))
		}
		fetch.SetHighWaterMark("t", p, msgs)
		offsets.SetOffset("t", p, sarama.OffsetOldest, 0).SetOffset("t", p, sarama.OffsetNewest, msgs)
	}
	mb.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": mockAPIVersions(t),
		"MetadataRequest":    md,
		"FetchRequest":       fetch,
		"OffsetRequest":      offsets,
	})
	// The mock answers an empty fetch at once; do not spin.
	mb.SetLatency(2 * time.Millisecond)
	return mb
}

func newManager(t *testing.T, cfg Config, brokers BrokerSource) *ConsumerFetcherManager {
	t.Helper()
	m, err := NewConsumerFetcherManager(cfg, brokers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func TestManagerStartStopRestart(t *testing.T) {
	mb := mockCluster(t, 2, 30)
	m := newManager(t, testConfig(t), staticBrokers{{ID: 0, Addr: mb.Addr()}})
	s := newStream(t, 2)
	tp0, tp1 := zkutil.TopicPartition{Topic: "t", Partition: 0}, zkutil.TopicPartition{Topic: "t", Partition: 1}
	// Partition 0 starts at 5; partition 1 has no offset and starts at the
	// end (largest).
	p0 := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 5, 5, 1<<20)
	p1 := streamcore.NewPartitionTopicInfo("t", 1, streamcore.QueueOf(s), -1, -1, 1<<20)
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p0, p1}); err != nil {
		t.Fatal(err)
	}
	if err := m.StartConnections(context.Background(), nil); !errors.Is(err, ErrAlreadyStarted) {
		t.Errorf("second start: %v", err)
	}
	c := collect(s)
	testwait.WaitFor(t, 10*time.Second, func() bool { return p0.FetchedOffset() == 30 && c.count() >= 25 }, "partition 0 fetched to 30")
	testwait.WaitFor(t, 10*time.Second, func() bool { return p1.FetchedOffset() == 30 }, "partition 1 reset")
	if p1.ConsumedOffset() != 30 {
		t.Errorf("reset did not move the consumed offset: %d", p1.ConsumedOffset())
	}
	offsets := m.StopConnections()
	msgs := c.stop()
	if offsets[tp0] != 30 || offsets[tp1] != 30 {
		t.Errorf("offsets %v", offsets)
	}
	for i, msg := range msgs {
		if msg.Partition != 0 || msg.Offset != int64(5+i) {
			t.Fatalf("message %d: %s-%d@%d", i, msg.Topic, msg.Partition, msg.Offset)
		}
	}
	if again := m.StopConnections(); len(again) != 0 {
		t.Errorf("second stop: %v", again)
	}

	// A new generation resumes where the last one stopped.
	p0 = streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 20, 20, 1<<20)
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p0}); err != nil {
		t.Fatal(err)
	}
	c = collect(s)
	testwait.WaitFor(t, 10*time.Second, func() bool { return c.count() == 10 }, "restart fetched")
	if offsets := m.StopConnections(); offsets[tp0] != 30 {
		t.Errorf("offsets after restart %v", offsets)
	}
	if msgs := c.stop(); msgs[0].Offset != 20 || msgs[9].Offset != 29 {
		t.Errorf("restart read %d..%d", msgs[0].Offset, msgs[len(msgs)-1].Offset)
	}

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.StartConnections(context.Background(), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("start after close: %v", err)
	}
}

func TestManagerRejectsBadInfos(t *testing.T) {
	m := newManager(t, testConfig(t), staticBrokers{})
	s := newStream(t, 1)
	p := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 0, 0, 1024)
	dup := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 0, 0, 1024)
	zero := streamcore.NewPartitionTopicInfo("t", 1, streamcore.QueueOf(s), 0, 0, 0)
	for name, infos := range map[string][]*streamcore.PartitionTopicInfo{
		"nil": {nil}, "duplicate": {p, dup}, "zero fetch size": {zero},
	} {
		if err := m.StartConnections(context.Background(), infos); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func TestStopInterruptsBlockedEnqueueAndFetch(t *testing.T) {
	mb := mockCluster(t, 1, 100)
	m := newManager(t, testConfig(t), staticBrokers{{ID: 0, Addr: mb.Addr()}})
	s := newStream(t, 1)
	p := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 0, 0, 1<<20)
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p}); err != nil {
		t.Fatal(err)
	}
	// Nobody reads: one chunk fills the queue, the fetcher blocks on the
	// second.
	testwait.WaitFor(t, 10*time.Second, func() bool { return streamcore.QueueOf(s).Len() == 1 }, "queue full")
	time.Sleep(100 * time.Millisecond)
	blockedAt := p.FetchedOffset()
	if blockedAt != 3 {
		t.Errorf("fetched offset %d with one chunk of 3 queued", blockedAt)
	}
	start := time.Now()
	offsets := m.StopConnections()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("stop took %v", d)
	}
	if got := offsets[zkutil.TopicPartition{Topic: "t", Partition: 0}]; got != blockedAt {
		t.Errorf("offset %d, want %d", got, blockedAt)
	}

	// A fetch in flight is interrupted too. (The mock sleeps through its
	// latency whatever happens, which delays its Close.)
	mb.SetLatency(3 * time.Second)
	p = streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(newStream(t, 1)), 0, 0, 1<<20)
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	start = time.Now()
	m.StopConnections()
	if d := time.Since(start); d > time.Second {
		t.Errorf("stop with a request in flight took %v", d)
	}
}

func TestStartContextCancelStopsFetching(t *testing.T) {
	mb := mockCluster(t, 1, 10)
	m := newManager(t, testConfig(t), staticBrokers{{ID: 0, Addr: mb.Addr()}})
	s := newStream(t, 1)
	p := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 0, 0, 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	if err := m.StartConnections(ctx, []*streamcore.PartitionTopicInfo{p}); err != nil {
		t.Fatal(err)
	}
	testwait.WaitFor(t, 10*time.Second, func() bool { return streamcore.QueueOf(s).Len() == 1 }, "first chunk")
	cancel()
	m.StopConnections()
}

func TestRevokedAndClosedPartitionsAreDropped(t *testing.T) {
	mb := mockCluster(t, 2, 50)
	m := newManager(t, testConfig(t), staticBrokers{{ID: 0, Addr: mb.Addr()}})
	s0 := newStream(t, 1)
	s1, s1ctl := newStreamControl(t, 1)
	p0 := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s0), 0, 0, 1<<20)
	p1 := streamcore.NewPartitionTopicInfo("t", 1, streamcore.QueueOf(s1), 0, 0, 1<<20)
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p0, p1}); err != nil {
		t.Fatal(err)
	}
	defer m.StopConnections()
	testwait.WaitFor(t, 10*time.Second, func() bool { return streamcore.QueueOf(s0).Len() == 1 && streamcore.QueueOf(s1).Len() == 1 }, "both queues filled")
	// The fetcher is blocked on one of the two queues; revoking p0 and
	// shutting s1 down frees it whichever it is, and neither partition
	// moves on afterwards.
	p0.Revoke()
	s1ctl.Shutdown()
	time.Sleep(200 * time.Millisecond)
	o0, o1 := p0.FetchedOffset(), p1.FetchedOffset()
	time.Sleep(300 * time.Millisecond)
	if p0.FetchedOffset() != o0 || p1.FetchedOffset() != o1 {
		t.Errorf("dropped partitions still fetched: %d->%d, %d->%d", o0, p0.FetchedOffset(), o1, p1.FetchedOffset())
	}
}

// switchBrokers is a BrokerSource whose list a test can change.
type switchBrokers struct {
	mu   sync.Mutex
	list staticBrokers
}

func (s *switchBrokers) Brokers(ctx context.Context) ([]BrokerInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.list.Brokers(ctx)
}

func (s *switchBrokers) set(list staticBrokers) {
	s.mu.Lock()
	s.list = list
	s.mu.Unlock()
}

// TestNoBrokerIsReported: the leader finder reports a missing broker once
// and keeps trying until one appears.
func TestNoBrokerIsReported(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	mb := mockCluster(t, 1, 10)
	for name, list := range map[string]staticBrokers{"unreachable": {{ID: 0, Addr: dead}}, "empty": {}} {
		var mu sync.Mutex
		var reported []error
		cfg := testConfig(t)
		cfg.OnError = func(err error) {
			mu.Lock()
			reported = append(reported, err)
			mu.Unlock()
		}
		brokers := &switchBrokers{list: list}
		m := newManager(t, cfg, brokers)
		s := newStream(t, 1)
		p := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 0, 0, 1<<20)
		if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p}); err != nil {
			t.Fatal(err)
		}
		testwait.WaitFor(t, 10*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(reported) > 0
		}, "%s", name+" reported")
		time.Sleep(300 * time.Millisecond) // several rounds of the leader finder
		brokers.set(staticBrokers{{ID: 0, Addr: mb.Addr()}})
		testwait.WaitFor(t, 10*time.Second, func() bool { return streamcore.QueueOf(s).Len() > 0 }, "%s", name+": fetching once a broker is there")
		m.StopConnections()
		mu.Lock()
		if len(reported) != 1 || !errors.Is(reported[0], ErrNoBrokers) {
			t.Errorf("%s: reported %v, want ErrNoBrokers once", name, reported)
		}
		mu.Unlock()
	}
}

// TestOneFetchAhead: the fetcher sends the next request while it enqueues
// a response, but never more than one: blocked on a full queue, it has
// sent exactly one request past the response it is blocked on. Read on,
// the chain of requests sent ahead delivers every message once, in order.
func TestOneFetchAhead(t *testing.T) {
	mb := mockCluster(t, 1, 100)
	m := newManager(t, testConfig(t), staticBrokers{{ID: 0, Addr: mb.Addr()}})
	s := newStream(t, 1)
	p := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 0, 0, 1<<20)
	fetches := func() int {
		n := 0
		for _, rr := range mb.History() {
			if _, ok := rr.Request.(*sarama.FetchRequest); ok {
				n++
			}
		}
		return n
	}
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p}); err != nil {
		t.Fatal(err)
	}
	testwait.WaitFor(t, 10*time.Second, func() bool { return streamcore.QueueOf(s).Len() == 1 }, "queue full")
	time.Sleep(200 * time.Millisecond)
	// Offsets 0-2 are queued, 3-5 wait for room, 6-8 were asked for ahead.
	n := fetches()
	time.Sleep(300 * time.Millisecond)
	if got := fetches(); n != 3 || got != n {
		t.Errorf("fetch requests while blocked: %d, then %d; want 3 (the queued one, the blocked one, one ahead)", n, got)
	}
	if p.FetchedOffset() != 3 {
		t.Errorf("fetched offset %d while blocked, want 3", p.FetchedOffset())
	}
	c := collect(s)
	testwait.WaitFor(t, 10*time.Second, func() bool { return c.count() >= 100 }, "all messages")
	offsets := m.StopConnections()
	msgs := c.stop()
	if len(msgs) != 100 {
		t.Errorf("read %d messages, want 100", len(msgs))
	}
	for i, msg := range msgs {
		if msg.Offset != int64(i) {
			t.Fatalf("message %d has offset %d", i, msg.Offset)
		}
	}
	if got := offsets[zkutil.TopicPartition{Topic: "t", Partition: 0}]; got != 100 {
		t.Errorf("offset %d, want 100", got)
	}
}
