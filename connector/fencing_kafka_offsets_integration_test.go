package connector

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// brokerProxies is a Dialer that routes connections to the cluster's
// brokers through proxies of their own, which the test can cut like a
// network partition, and dials anything else (the ZooKeeper proxies)
// directly.
type brokerProxies struct {
	proxies map[string]*testcluster.Proxy // by broker address
}

func newBrokerProxies(t *testing.T, c *testcluster.Cluster) *brokerProxies {
	t.Helper()
	d := &brokerProxies{proxies: map[string]*testcluster.Proxy{}}
	for _, addr := range c.BrokerAddrs() {
		p, err := testcluster.NewProxy(addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Close() })
		d.proxies[addr] = p
	}
	return d
}

func (d *brokerProxies) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if p := d.proxies[addr]; p != nil {
		addr = p.Addr()
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

func (d *brokerProxies) setMode(m testcluster.ProxyMode) {
	for _, p := range d.proxies {
		p.SetMode(m)
	}
}

// links is the number of connections the proxies carry.
func (d *brokerProxies) links() int {
	n := 0
	for _, p := range d.proxies {
		n += p.Links()
	}
	return n
}

// TestKafkaCommitCutOffWhenZooKeeperLeaseLapses is review finding N1 of
// 2026-12-06, with the real pieces: a ZooKeeper-mode member with
// offsets.storage=kafka commits through commitZK (its ZooKeeper session's
// lease as the fence, sessionFence) over a path to the broker that is then
// partitioned, so a commit stays unanswered; ZooKeeper becomes unreachable
// too, and the lease lapses by the clock while the commit is in flight.
// The commit must be cut off at the lapse (ErrFenced, well before the
// broker path heals), not left to land over the next owner's commit: the
// lease used to signal renewals and revocations only, so the commit waited
// for its answer and returned nil once the path healed.
func TestKafkaCommitCutOffWhenZooKeeperLeaseLapses(t *testing.T) {
	oneAtATime(t)
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	topic := newTopic(t, c, 1, 0)
	group := testcluster.UniqueName("g-lapse-commit")
	tp := zkutil.TopicPartition{Topic: topic, Partition: 0}
	owner := zkutil.OwnerPath(group, topic, 0)

	base := testConfig(c, group) // zookeeper.session.timeout.ms 4000: a lease of 3 s
	base.OffsetsStorage = OffsetsStorageKafka
	base.DualCommitEnabled = DualCommitOff // the max-of-stores fetch would hide a stale Kafka commit
	base.AutoCommitEnable = false
	// The lease, not the socket timeout, must end the wait.
	base.OffsetsChannelSocketTimeout = time.Minute
	cfg, zk := throughProxy(t, c, base)
	brokers := newBrokerProxies(t, c)
	stale := newConnector(t, cfg, WithDialer(brokers))
	next := newConnector(t, base)
	t.Cleanup(func() { // before the Shutdowns, also after a failed check
		zk.SetMode(testcluster.Forward)
		brokers.setMode(testcluster.Forward)
	})

	session := stale.session.ID()
	require.NoError(t, stale.session.Bind(session).CreateEphemeral(ctx, owner, []byte("stale")))
	require.NoError(t, stale.commitZK(ctx, session, map[zkutil.TopicPartition]int64{tp: 99}), "a commit on a healthy path")
	require.Positive(t, brokers.links(), "the commit did not go through the broker proxies")

	brokers.setMode(testcluster.Blackhole)
	result := make(chan error, 1)
	go func() { result <- stale.commitZK(ctx, session, map[zkutil.TopicPartition]int64{tp: 100}) }()
	time.Sleep(500 * time.Millisecond) // the request waits in the partitioned path
	require.True(t, stale.session.LeaseHeld(session), "the lease must still hold when the commit is sent")
	cut := time.Now()
	zk.SetMode(testcluster.Blackhole)
	require.Eventually(t, func() bool { return !stale.session.LeaseHeld(session) }, 10*time.Second, time.Millisecond)
	lapsed := time.Now()
	t.Logf("the lease lapsed %v after ZooKeeper became unreachable", lapsed.Sub(cut))

	var (
		err      error
		returned bool
	)
	select {
	case err = <-result:
		returned = true
		t.Logf("the stale commit returned %v after the lapse: %v", time.Since(lapsed), err)
	case <-time.After(2 * time.Second):
		t.Errorf("the stale commit is still in flight %v after its lease lapsed (not cut off)", time.Since(lapsed))
	}

	// The next owner takes over once the stale session has expired (its
	// owner node is gone) and commits.
	require.Eventually(t, func() bool {
		ok, _, eerr := next.session.Exists(ctx, owner)
		return eerr == nil && !ok
	}, 30*time.Second, 20*time.Millisecond, "the stale session did not expire")
	t.Logf("the session expired %v after the lapse", time.Since(lapsed))
	nextSession := next.session.ID()
	require.NoError(t, next.session.Bind(nextSession).CreateEphemeral(ctx, owner, []byte("next")))
	require.NoError(t, next.commitZK(ctx, nextSession, map[zkutil.TopicPartition]int64{tp: 200}))

	// The broker path heals; nothing of the stale commit may land.
	brokers.setMode(testcluster.Forward)
	if !returned {
		err = <-result
		t.Logf("the stale commit returned after the heal: %v", err)
	}
	if !errors.Is(err, coordinator.ErrFenced) {
		t.Errorf("the stale commit returned %v, want ErrFenced", err)
	}
	time.Sleep(2 * time.Second) // anything delivered late has landed
	got, _, ferr := next.offsets.Fetch(ctx, []zkutil.TopicPartition{tp})
	require.NoError(t, ferr)
	require.Equal(t, int64(200), got[tp], "the stale commit landed over the next owner's")
}
