package coordinator

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/abortdial"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// testFence is a Fence a test switches.
type testFence struct {
	mu      sync.Mutex
	held    bool
	changed chan struct{}
}

func newTestFence(held bool) *testFence { return &testFence{held: held, changed: make(chan struct{})} }

func (f *testFence) Held() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held
}

func (f *testFence) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

func (f *testFence) set(held bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held = held
	close(f.changed)
	f.changed = make(chan struct{})
}

// proxiedDialer dials every broker through a proxy of its own, which the
// test can cut like a network partition. It counts the OffsetCommit
// requests written into a cut path.
type proxiedDialer struct {
	t       *testing.T
	mu      sync.Mutex
	proxies map[string]*testcluster.Proxy
	cut     bool
	// commitsIntoCut counts the OffsetCommit requests written while cut.
	commitsIntoCut atomic.Int64
}

// watchedConn is a client's connection to a proxy that tells its dialer
// of every OffsetCommit request written while the proxies are cut.
type watchedConn struct {
	*net.TCPConn // SetLinger too, for abortdial's Reset
	d            *proxiedDialer
}

// apiKeyOffsetCommit is OffsetCommit's key in a Kafka request header.
const apiKeyOffsetCommit = 8

func (c watchedConn) Write(b []byte) (int, error) {
	n, err := c.TCPConn.Write(b)
	// A request is written in one piece: its size (4 bytes), then its
	// API key (2 bytes).
	if n > 0 && len(b) >= 6 && binary.BigEndian.Uint16(b[4:6]) == apiKeyOffsetCommit {
		c.d.mu.Lock()
		cut := c.d.cut
		c.d.mu.Unlock()
		if cut {
			c.d.commitsIntoCut.Add(1)
		}
	}
	return n, err
}

func (d *proxiedDialer) Dial(network, addr string) (net.Conn, error) {
	d.mu.Lock()
	p := d.proxies[addr]
	if p == nil {
		var err error
		if p, err = testcluster.NewProxy(addr); err != nil {
			d.mu.Unlock()
			return nil, err
		}
		d.proxies[addr] = p
		d.t.Cleanup(func() { _ = p.Close() })
	}
	d.mu.Unlock()
	c, err := net.DialTimeout(network, p.Addr(), 5*time.Second)
	if err != nil {
		return nil, err
	}
	return watchedConn{TCPConn: c.(*net.TCPConn), d: d}, nil
}

func (d *proxiedDialer) setMode(m testcluster.ProxyMode) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cut = m == testcluster.Blackhole
	for _, p := range d.proxies {
		p.SetMode(m)
	}
}

// TestFencedCommitCutOffWhenFenceLapses is the Kafka-storage twin of item
// 1 of the ensemble safety issue: a ZooKeeper-mode member with
// offsets.storage=kafka commits while its lease holds, the network to the
// coordinator is partitioned, the lease lapses (the session will expire and
// a peer take over) and the partition heals later. Kafka does not fence
// commits from outside a group, so the stale commit would land over the
// new owner's. A fenced commit is cut off with a reset when the fence
// lapses, so its bytes never reach the broker; without the fence (as
// before) they do. A fence that does not hold sends nothing at all. The
// fence here is switched by the test; that the real one, a ZooKeeper
// session's lease, tells of its lapse by the clock is checked by
// connector's TestKafkaCommitCutOffWhenZooKeeperLeaseLapses.
func TestFencedCommitCutOffWhenFenceLapses(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic, group := testcluster.UniqueName("fence"), testcluster.UniqueName("fence-g")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
	tp := zkutil.TopicPartition{Topic: topic, Partition: 0}

	dial := &proxiedDialer{t: t, proxies: map[string]*testcluster.Proxy{}}
	newClient := func(reset *abortdial.Dialer) func() (sarama.Client, error) {
		return func() (sarama.Client, error) {
			cfg := testcluster.SaramaConfig()
			cfg.Metadata.Full = false
			cfg.Net.ReadTimeout = time.Minute // the fence, not the timeout, ends the wait
			cfg.Net.Proxy.Enable, cfg.Net.Proxy.Dialer = true, reset
			return sarama.NewClient(c.BrokerAddrs(), cfg)
		}
	}
	committed := func() int64 {
		t.Helper()
		reader := New(group, func() (sarama.Client, error) {
			cfg := testcluster.SaramaConfig()
			cfg.Metadata.Full = false
			return sarama.NewClient(c.BrokerAddrs(), cfg)
		}, 5, 200*time.Millisecond)
		defer reader.Close()
		got, _, err := reader.Fetch(ctx, []zkutil.TopicPartition{tp})
		require.NoError(t, err)
		return got[tp]
	}
	// stale commits offset to a partitioned coordinator under ctx, lets
	// the fence (if any) lapse, heals, and returns the commit's error.
	stale := func(fence *testFence, offset int64) error {
		reset := abortdial.Through(dial, context.Canceled)
		k := New(group, newClient(reset), 0, 0, WithReset(reset.Reset))
		defer k.Close()
		commit := k.Commit
		if fence != nil {
			commit = func(ctx context.Context, offsets map[zkutil.TopicPartition]int64) error {
				return k.CommitFenced(ctx, fence, offsets)
			}
		}
		require.NoError(t, commit(ctx, map[zkutil.TopicPartition]int64{tp: offset - 1}), "a commit on a healthy path")
		dial.setMode(testcluster.Blackhole)
		sent := dial.commitsIntoCut.Load()
		result := make(chan error, 1)
		go func() { result <- commit(ctx, map[zkutil.TopicPartition]int64{tp: offset}) }()
		// The request waits in the partitioned path.
		testwait.WaitFor(t, 30*time.Second, func() bool { return dial.commitsIntoCut.Load() > sent }, "the commit written into the partition")
		if fence == nil {
			dial.setMode(testcluster.Forward)
			return <-result
		}
		fence.set(false)
		var err error
		select {
		case err = <-result:
		case <-time.After(30 * time.Second):
			t.Fatal("the fenced commit did not end when its fence lapsed")
		}
		// The proxy learns of the reset from its own read, a moment
		// after it happened (a real sender's kernel drops the bytes at
		// once); the partition heals later than that.
		time.Sleep(500 * time.Millisecond)
		dial.setMode(testcluster.Forward)
		return err
	}

	// Without a fence, the stale commit lands once the partition heals.
	require.NoError(t, stale(nil, 100))
	require.Equal(t, int64(100), committed())

	// A fenced stale commit never lands: the coordinator keeps the last
	// commit made while the fence held.
	fence := newTestFence(true)
	err := stale(fence, 50)
	require.ErrorIs(t, err, ErrFenced)
	time.Sleep(2 * time.Second) // anything delivered late has landed
	require.Equal(t, int64(49), committed(), "the cut-off commit reached the coordinator after its fence lapsed")

	// A fence that does not hold sends nothing.
	k := New(group, newClient(abortdial.New(5*time.Second, 0, context.Canceled)), 5, 200*time.Millisecond)
	defer k.Close()
	err = k.CommitFenced(ctx, newTestFence(false), map[zkutil.TopicPartition]int64{tp: 7})
	require.ErrorIs(t, err, ErrFenced)
	require.Equal(t, int64(49), committed())
}
