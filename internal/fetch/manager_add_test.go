package fetch

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestAddPartitionsAndAttach: a partition added to running connections is
// fetched from its offset and stopped with the others; a goroutine attached
// to them sees its context end and is waited for by StopConnections.
func TestAddPartitionsAndAttach(t *testing.T) {
	mb := mockCluster(t, 2, 30)
	m := newManager(t, testConfig(t), staticBrokers{{ID: 0, Addr: mb.Addr()}})
	s := newStream(t, 2)
	p0 := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 25, 25, 1<<20)
	p1 := streamcore.NewPartitionTopicInfo("t", 1, streamcore.QueueOf(s), 10, 10, 1<<20)
	if err := m.AddPartitions([]*streamcore.PartitionTopicInfo{p1}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("add before start: %v", err)
	}
	if err := m.Attach(func(context.Context) {}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("attach before start: %v", err)
	}
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p0}); err != nil {
		t.Fatal(err)
	}
	c := collect(s)
	testwait.WaitFor(t, 10*time.Second, func() bool { return c.count() == 5 }, "partition 0 fetched")

	var attachedDone atomic.Bool
	added := make(chan error, 1)
	if err := m.Attach(func(ctx context.Context) {
		added <- m.AddPartitions([]*streamcore.PartitionTopicInfo{p1})
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond) // StopConnections must wait for this
		attachedDone.Store(true)
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-added; err != nil {
		t.Fatal(err)
	}
	testwait.WaitFor(t, 10*time.Second, func() bool { return c.count() == 25 }, "added partition fetched")
	if err := m.AddPartitions([]*streamcore.PartitionTopicInfo{p0}); err == nil {
		t.Error("a partition already fetched was added again")
	}

	offsets := m.StopConnections()
	if !attachedDone.Load() {
		t.Error("StopConnections returned before the attached goroutine")
	}
	tp1 := zkutil.TopicPartition{Topic: "t", Partition: 1}
	if offsets[tp1] != 30 {
		t.Errorf("offsets %v", offsets)
	}
	for _, msg := range c.stop() {
		if msg.Partition == 1 && msg.Offset < 10 {
			t.Fatalf("partition 1 read from %d, not from its offset 10", msg.Offset)
		}
	}
	if err := m.AddPartitions([]*streamcore.PartitionTopicInfo{p1}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("add after stop: %v", err)
	}
}

// TestAddUnsetPartitionWhileFetchingAhead: a partition added without an
// offset is resolved with ListOffsets, a request of sarama's, on the
// connection that the fetcher's own request sent ahead is using. The two
// must not overlap: the partition is read from its start and nothing is
// reported.
func TestAddUnsetPartitionWhileFetchingAhead(t *testing.T) {
	mb := mockCluster(t, 2, 30)
	mb.SetLatency(20 * time.Millisecond)
	turns := newTurnProxy(t, mb.Addr())
	var errs errorRecorder
	cfg := testConfig(t)
	cfg.AutoOffsetReset = AutoOffsetResetSmallest
	cfg.OnError = errs.record
	m := newManager(t, cfg, staticBrokers{{ID: 0, Addr: turns.addr()}})
	s := newStream(t, 2)
	p0 := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), 30, 30, 1<<20) // at the end: empty fetches
	p1 := streamcore.NewPartitionTopicInfo("t", 1, streamcore.QueueOf(s), -1, -1, 1<<20)
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p0}); err != nil {
		t.Fatal(err)
	}
	defer m.StopConnections()
	c := collect(s)
	time.Sleep(100 * time.Millisecond) // fetching ahead on partition 0
	if err := m.AddPartitions([]*streamcore.PartitionTopicInfo{p1}); err != nil {
		t.Fatal(err)
	}
	testwait.WaitFor(t, 10*time.Second, func() bool { return c.count() == 30 }, "added partition fetched")
	for i, msg := range c.stop() {
		if msg.Partition != 1 || msg.Offset != int64(i) {
			t.Fatalf("message %d is %d@%d", i, msg.Partition, msg.Offset)
		}
	}
	if n := turns.overlaps.Load(); n > 0 {
		t.Errorf("%d requests sent while another one awaited its response", n)
	}
	errs.mu.Lock()
	defer errs.mu.Unlock()
	if len(errs.errs) > 0 {
		t.Errorf("reported: %v", errs.errs)
	}
}

// turnProxy forwards connections to a broker and counts the requests a
// client sends while an earlier one on the same connection has not had
// its response yet.
type turnProxy struct {
	ln       net.Listener
	target   string
	overlaps atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

func newTurnProxy(t *testing.T, target string) *turnProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &turnProxy{ln: ln, target: target}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		_ = p.ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *turnProxy) addr() string { return p.ln.Addr().String() }

func (p *turnProxy) accept() {
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
		var pending atomic.Int64
		frames := func(dst, src net.Conn, each func()) {
			defer dst.Close()
			for {
				var size [4]byte
				if _, err := io.ReadFull(src, size[:]); err != nil {
					return
				}
				body := make([]byte, binary.BigEndian.Uint32(size[:]))
				if _, err := io.ReadFull(src, body); err != nil {
					return
				}
				each()
				if _, err := dst.Write(append(size[:], body...)); err != nil {
					return
				}
			}
		}
		p.wg.Go(func() {
			frames(s, c, func() {
				if pending.Add(1) > 1 {
					p.overlaps.Add(1)
				}
			})
		})
		p.wg.Go(func() { frames(c, s, func() { pending.Add(-1) }) })
	}
}
