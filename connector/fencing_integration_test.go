package connector

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testcluster"
	"github.com/zkconsumer/zkconsumer/rebalance"
)

// produceWhile produces batches of n messages every interval, numbering
// them from first, until stop is closed; it returns the next number.
func produceWhile(t *testing.T, c *testcluster.Cluster, topic string, first, n int, interval time.Duration, stop <-chan struct{}) <-chan int {
	out := make(chan int, 1)
	go func() {
		next := first
		defer func() { out <- next }()
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ticker.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := c.Produce(ctx, topic, n, testcluster.ProduceOptions{Partition: -1, FirstSeq: next})
			cancel()
			if err != nil {
				t.Errorf("produce: %v", err)
				return
			}
			next += n
		}
	}()
	return out
}

// TestCutOffMemberPausesDeliveryAndKeepsItsSession cuts a member off
// ZooKeeper (traffic blackholed) for longer than its lease but shorter
// than its session. While the lease has lapsed it hands out nothing, even
// though its fetchers still reach Kafka; when ZooKeeper answers again it
// resumes in the same session, without a rebalance and without
// re-reading what it had consumed (before the lease, a grace timer
// dropped the generation and the member re-read from the last commit).
func TestCutOffMemberPausesDeliveryAndKeepsItsSession(t *testing.T) {
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 2, 100)
	group := testcluster.UniqueName("g-cut")
	proxy, err := testcluster.NewProxy(c.ZKServer())
	require.NoError(t, err)
	t.Cleanup(func() { proxy.Close() })
	cfg := testConfig(c, group)
	cfg.ZookeeperConnect = proxy.Addr() + c.Chroot()
	cfg.ZookeeperSessionTimeout = 12 * time.Second
	conn := newConnector(t, cfg)
	ctx := testCtx(t, 3*time.Minute)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col := newCollector()
	col.read(ctx, "c", streams[topic][0])
	col.waitAll(t, 0, 100, time.Minute)
	session := conn.session.ID()
	gens := conn.member.Generation().ID

	stop := make(chan struct{})
	produced := produceWhile(t, c, topic, 100, 10, 50*time.Millisecond, stop)
	proxy.SetMode(testcluster.Blackhole)
	require.Eventually(t, func() bool { return !conn.session.LeaseHeld(session) }, 12*time.Second, 5*time.Millisecond)
	lapsed := time.Now()
	time.Sleep(time.Second) // still well inside the session timeout
	healed := time.Now()
	proxy.SetMode(testcluster.Forward)
	require.Eventually(t, func() bool { return conn.session.LeaseHeld(session) }, 12*time.Second, 5*time.Millisecond)
	close(stop)
	n := <-produced
	rs := col.waitAll(t, 0, n, time.Minute)

	for _, r := range rs {
		require.False(t, r.At.After(lapsed.Add(50*time.Millisecond)) && r.At.Before(healed),
			"offset %d of partition %d was handed out %v after the lease lapsed", r.Offset, r.Partition, r.At.Sub(lapsed))
	}
	for seq, times := range distinct(rs) {
		require.Equal(t, 1, times, "message %d delivered %d times: the member re-read after keeping its session", seq, times)
	}
	require.Equal(t, session, conn.session.ID(), "the session survived")
	require.Equal(t, gens, conn.member.Generation().ID, "no rebalance was needed")
	checkOrder(t, rs)
}

// TestFrozenMemberDeliversNothingOfLostPartitions freezes a member process
// (SIGSTOP) past its session timeout, long enough for a peer to take its
// partitions over. Woken up (SIGCONT), it must not hand out a single
// message of those partitions: its lease counts from requests sent before
// the freeze, whatever answers wait in its sockets. It rejoins, and the
// group converges; every message is delivered.
func TestFrozenMemberDeliversNothingOfLostPartitions(t *testing.T) {
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 4, 200)
	group := testcluster.UniqueName("g-frozen")
	cfg := testConfig(c, group) // 4 s session
	col := newCollector()
	frozen := startChild(t, col, childSpec{Name: "frozen", Props: props(cfg), Topic: topic, Streams: 1})
	peer := newConnector(t, cfg)
	ctx := testCtx(t, 3*time.Minute)
	streams, err := peer.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col.read(ctx, "peer", streams[topic][0])
	waitOwners(t, c, group, topic, 4, 2)

	stop := make(chan struct{})
	var once sync.Once
	stopProducing := func() { once.Do(func() { close(stop) }) }
	defer stopProducing()
	produced := produceWhile(t, c, topic, 200, 8, 50*time.Millisecond, stop)
	time.Sleep(time.Second)
	stopped := time.Now()
	require.NoError(t, frozen.cmd.Process.Signal(syscall.SIGSTOP))
	time.Sleep(2*cfg.ZookeeperSessionTimeout + time.Second)
	resumed := time.Now()
	require.NoError(t, frozen.cmd.Process.Signal(syscall.SIGCONT))
	waitOwners(t, c, group, topic, 4, 2)
	time.Sleep(2 * time.Second)
	stopProducing()
	n := <-produced
	rs := col.waitAll(t, 0, n, 2*time.Minute)

	// For each partition the peer delivered while the member was frozen,
	// the member may deliver it again only after the peer's last delivery.
	peerLast := map[int32]time.Time{}
	for _, r := range rs {
		if r.Consumer == "peer" && r.At.After(stopped) && r.At.After(peerLast[r.Partition]) {
			peerLast[r.Partition] = r.At
		}
	}
	require.NotEmpty(t, peerLast)
	for _, r := range rs {
		last, taken := peerLast[r.Partition]
		if r.Consumer == "frozen" && taken && r.At.After(resumed) && !r.At.After(last) {
			t.Errorf("the woken member handed out offset %d of partition %d %v after SIGCONT, while the peer owned it (the peer delivered it until %v after SIGCONT)",
				r.Offset, r.Partition, r.At.Sub(resumed), last.Sub(resumed))
		}
	}
	select {
	case err := <-peer.Errors():
		require.NotErrorIs(t, err, rebalance.ErrOwnershipLost, "the peer lost nothing")
	default:
	}
	frozen.leave(t)
}
