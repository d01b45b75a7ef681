package fetch

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
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
func nextOrError(ctx context.Context, s *streamcore.KafkaStream) ([]*streamcore.Message, error) {
	var got []*streamcore.Message
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

	m := newManager(t, testConfig(t), staticBrokers{{ID: 0, Addr: mb.Addr()}})
	s := newStream(t, 2)
	p := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 0, 0, 1024)
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p}); err != nil {
		t.Fatal(err)
	}
	defer m.StopConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := nextOrError(ctx, s)
	if want := []int64{0, 1, 2, 3, 4}; !equalOffsets(offsetsOf(got), want) {
		t.Errorf("delivered %v, want %v", offsetsOf(got), want)
	}
	var perr *streamcore.PartitionError
	if !errors.As(err, &perr) || !errors.Is(err, streamcore.ErrMessageTooLarge) || perr.Partition != 0 {
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

// corruptingProxy forwards connections to a broker and replaces, in every
// response frame, the bytes from with to (same length), leaving checksums
// as they were: what a corrupt batch on the broker looks like on the wire.
type corruptingProxy struct {
	ln       net.Listener
	target   string
	from, to []byte

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newCorruptingProxy(t *testing.T, target string, from, to []byte) *corruptingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &corruptingProxy{ln: ln, target: target, from: from, to: to}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *corruptingProxy) addr() string { return p.ln.Addr().String() }

func (p *corruptingProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(s, c)
			_ = s.Close()
		}()
		go func() {
			defer p.wg.Done()
			defer c.Close()
			for {
				var size [4]byte
				if _, err := io.ReadFull(s, size[:]); err != nil {
					return
				}
				body := make([]byte, binary.BigEndian.Uint32(size[:]))
				if _, err := io.ReadFull(s, body); err != nil {
					return
				}
				body = bytes.ReplaceAll(body, p.from, p.to)
				if _, err := c.Write(append(size[:], body...)); err != nil {
					return
				}
			}
		}()
	}
}

func (p *corruptingProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// TestCorruptBatchIsIsolated: one partition's response holds a batch whose
// checksum does not match, which fails sarama's decoding of the whole
// response. The other partition of the fetcher keeps flowing; the corrupt
// one delivers what precedes the bad data, then its stream reports
// ErrCorruptMessage and the partition stops there.
func TestCorruptBatchIsIsolated(t *testing.T) {
	mb := sarama.NewMockBroker(t, 0)
	t.Cleanup(mb.Close)
	proxy := newCorruptingProxy(t, mb.Addr(), []byte("CORRUPT!"), []byte("corrupt!"))
	md := sarama.NewMockMetadataResponse(t).SetBroker(proxy.addr(), 0).SetLeader("t", 0, 0).SetLeader("t", 1, 0)
	fetch := sarama.NewMockFetchResponse(t, 3)
	for o := range int64(30) {
		fetch.SetMessage("t", 0, o, sarama.StringEncoder("m"))
		v := "m"
		if o == 10 {
			v = "CORRUPT!"
		}
		fetch.SetMessage("t", 1, o, sarama.StringEncoder(v))
	}
	fetch.SetHighWaterMark("t", 0, 30).SetHighWaterMark("t", 1, 30)
	mb.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": mockAPIVersions(t),
		"MetadataRequest":    md,
		"FetchRequest":       fetch,
	})
	mb.SetLatency(2 * time.Millisecond)

	var mu sync.Mutex
	var reported []error
	cfg := testConfig(t)
	cfg.OnError = func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	}
	m := newManager(t, cfg, staticBrokers{{ID: 0, Addr: proxy.addr()}})
	s0, s1 := newStream(t, 2), newStream(t, 2)
	p0 := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s0), 0, 0, 1<<20)
	p1 := streamcore.NewPartitionTopicInfo("t", 1, streamcore.QueueOf(s1), 0, 0, 1<<20)
	col := collect(s0)
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p0, p1}); err != nil {
		t.Fatal(err)
	}
	defer m.StopConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := nextOrError(ctx, s1)
	var perr *streamcore.PartitionError
	if !errors.As(err, &perr) || !errors.Is(err, streamcore.ErrCorruptMessage) || perr.Partition != 1 {
		t.Fatalf("partition 1: %d messages, then %v; want a PartitionError wrapping ErrCorruptMessage", len(got), err)
	}
	t.Logf("partition 1: %d messages, then %v", len(got), err)
	for i, msg := range got {
		if msg.Offset != int64(i) {
			t.Fatalf("partition 1: message %d has offset %d", i, msg.Offset)
		}
	}
	stopped := p1.FetchedOffset()
	if int(stopped) != len(got) || stopped > 10 {
		t.Errorf("partition 1 stopped at %d after %d messages; want at the messages delivered, at most 10", stopped, len(got))
	}
	testwait.WaitFor(t, 10*time.Second, func() bool { return col.count() == 30 }, "partition 0 read to the end")
	time.Sleep(200 * time.Millisecond)
	if p1.FetchedOffset() != stopped {
		t.Errorf("partition 1 moved on from %d to %d", stopped, p1.FetchedOffset())
	}
	for i, msg := range col.stop() {
		if msg.Partition != 0 || msg.Offset != int64(i) {
			t.Fatalf("partition 0: message %d is %d@%d", i, msg.Partition, msg.Offset)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("reported: %v", reported)
}

// errorRecorder collects what a manager reports through Config.OnError.
type errorRecorder struct {
	mu   sync.Mutex
	errs []error
}

func (r *errorRecorder) record(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

// partitionErrors returns the reports that are PartitionErrors of topic.
func (r *errorRecorder) partitionErrors(topic string) []*streamcore.PartitionError {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*streamcore.PartitionError
	for _, err := range r.errs {
		var perr *streamcore.PartitionError
		if errors.As(err, &perr) && perr.Topic == topic {
			out = append(out, perr)
		}
	}
	return out
}

// TestLeaderlessPartitionIsReported: a topic the broker refuses
// (TOPIC_AUTHORIZATION_FAILED) leaves its partition without a leader. The
// leader finder reports it through OnError, naming topic, partition and
// error code, once per state and then at most every leaderlessRepeat,
// while asking for metadata every RefreshLeaderBackoff; another topic of
// the same fetcher flows. Once authorised, the partition is fetched.
func TestLeaderlessPartitionIsReported(t *testing.T) {
	mb := sarama.NewMockBroker(t, 0)
	t.Cleanup(mb.Close)
	denied := sarama.NewMockMetadataResponse(t).SetBroker(mb.Addr(), 0).SetLeader("u", 0, 0).SetError("t", sarama.ErrTopicAuthorizationFailed)
	fetch := sarama.NewMockFetchResponse(t, 3)
	for o := range int64(10) {
		fetch.SetMessage("t", 0, o, sarama.StringEncoder("m"))
		fetch.SetMessage("u", 0, o, sarama.StringEncoder("m"))
	}
	fetch.SetHighWaterMark("t", 0, 10).SetHighWaterMark("u", 0, 10)
	handlers := func(md *sarama.MockMetadataResponse) map[string]sarama.MockResponse {
		return map[string]sarama.MockResponse{
			"ApiVersionsRequest": mockAPIVersions(t),
			"MetadataRequest":    md,
			"FetchRequest":       fetch,
		}
	}
	mb.SetHandlerByMap(handlers(denied))
	mb.SetLatency(2 * time.Millisecond)

	var rec errorRecorder
	cfg := testConfig(t)
	cfg.OnError = rec.record
	m := newManager(t, cfg, staticBrokers{{ID: 0, Addr: mb.Addr()}})
	m.leaderlessGrace, m.leaderlessRepeat = 0, 400*time.Millisecond
	s := newStream(t, 2)
	pt := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 0, 0, 1<<20)
	pu := streamcore.NewPartitionTopicInfo("u", 0, streamcore.QueueOf(s), 0, 0, 1<<20)
	col := collect(s)
	start := time.Now()
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{pt, pu}); err != nil {
		t.Fatal(err)
	}
	defer m.StopConnections()
	testwait.WaitFor(t, 5*time.Second, func() bool { return len(rec.partitionErrors("t")) > 0 }, "a report for t-0")
	first := rec.partitionErrors("t")[0]
	t.Logf("reported: %v", first)
	if first.Partition != 0 || !errors.Is(first, ErrNoLeader) || !errors.Is(first, sarama.ErrTopicAuthorizationFailed) ||
		!strings.Contains(first.Error(), "TOPIC_AUTHORIZATION_FAILED") {
		t.Errorf("report %q: want t-0, ErrNoLeader and TOPIC_AUTHORIZATION_FAILED", first)
	}
	testwait.WaitFor(t, 5*time.Second, func() bool { return col.count() == 10 }, "u-0 read")

	time.Sleep(time.Second)
	elapsed := time.Since(start)
	metadata := 0
	for _, rr := range mb.History() {
		if _, ok := rr.Request.(*sarama.MetadataRequest); ok {
			metadata++
		}
	}
	reports := len(rec.partitionErrors("t"))
	// Every 50 ms a metadata request; every 400 ms at most a report.
	if maxReports := int(elapsed/(400*time.Millisecond)) + 1; reports > maxReports {
		t.Errorf("%d reports in %v, want at most %d", reports, elapsed, maxReports)
	}
	if maxRounds := int(elapsed/(50*time.Millisecond)) + 2; metadata < 5 || metadata > maxRounds {
		t.Errorf("%d metadata requests in %v, want a few and at most %d (one per backoff)", metadata, elapsed, maxRounds)
	}
	t.Logf("%d reports and %d metadata requests in %v", reports, metadata, elapsed)

	// Authorised: the partition gets its leader and is read.
	mb.SetHandlerByMap(handlers(sarama.NewMockMetadataResponse(t).SetBroker(mb.Addr(), 0).SetLeader("u", 0, 0).SetLeader("t", 0, 0)))
	testwait.WaitFor(t, 5*time.Second, func() bool { return col.count() == 20 }, "t-0 read")
	col.stop()
	if rec.partitionErrors("u") != nil {
		t.Errorf("u-0 reported: %v", rec.partitionErrors("u"))
	}
}
