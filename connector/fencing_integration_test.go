package connector

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zkgroup"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// produceWhile produces batches of n messages every interval, numbering
// them from first, until stop is closed; it returns the next number. It
// also stops, silently, when the test ends first (a failed check), so that
// no produce outlives its test.
func produceWhile(t *testing.T, c *testcluster.Cluster, topic string, first, n int, interval time.Duration, stop <-chan struct{}) <-chan int {
	ended, end := context.WithCancel(context.Background())
	out := make(chan int, 1)
	done := make(chan struct{})
	t.Cleanup(func() { end(); <-done })
	go func() {
		defer close(done)
		next := first
		defer func() { out <- next }()
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ended.Done():
				return
			case <-ticker.C:
			}
			ctx, cancel := context.WithTimeout(ended, 60*time.Second)
			_, err := c.Produce(ctx, topic, n, testcluster.ProduceOptions{Partition: -1, FirstSeq: next})
			cancel()
			if ended.Err() != nil {
				return
			}
			if err != nil {
				t.Errorf("produce: %v", err)
				return
			}
			next += n
		}
	}()
	return out
}

// readAll reads topic with one stream of conn until the first n messages
// have arrived, and keeps reading until the test ends.
func readAll(t *testing.T, conn *ConsumerConnector, topic string, n int) (context.Context, *collector) {
	t.Helper()
	ctx := testwait.Context(t, 3*time.Minute)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col := newCollector()
	col.read(ctx, "c", streams[topic][0])
	col.waitAll(t, 0, n, time.Minute)
	return ctx, col
}

// throughProxy points cfg at ZooKeeper through proxies (one per server)
// the test can cut.
func throughProxy(t *testing.T, c *testcluster.Cluster, cfg Config) (Config, *testcluster.ProxySet) {
	t.Helper()
	proxy, err := c.NewZooKeeperProxies()
	require.NoError(t, err)
	t.Cleanup(func() { proxy.Close() })
	cfg.ZooKeeperConnect = proxy.Connect()
	return cfg, proxy
}

// TestCutOffMemberPausesDeliveryAndKeepsItsSession cuts a member off
// ZooKeeper (traffic blackholed) for longer than its lease but shorter
// than its session. While the lease has lapsed it hands out nothing, even
// though its fetchers still reach Kafka; when ZooKeeper answers again it
// resumes in the same session, without a rebalance and without
// re-reading what it had consumed (before the lease, a grace timer
// dropped the generation and the member re-read from the last commit).
func TestCutOffMemberPausesDeliveryAndKeepsItsSession(t *testing.T) {
	oneAtATime(t)
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 2, 100)
	group := testcluster.UniqueName("g-cut")
	cfg, proxy := throughProxy(t, c, testConfig(c, group))
	// The lease lapses after three quarters of the session timeout; what
	// is left of the session (a quarter, 7.5 s) is the time the client
	// has to reach ZooKeeper again once healed: ample also on a machine
	// so loaded that reconnecting takes seconds (at 12 s, with 2 s left,
	// the session once expired under load average 27).
	cfg.ZooKeeperSessionTimeout = 30 * time.Second
	conn := newConnector(t, cfg)
	_, col := readAll(t, conn, topic, 100)
	session := conn.session.ID()
	gens := conn.member.Generation().ID

	stop := make(chan struct{})
	produced := produceWhile(t, c, topic, 100, 10, 50*time.Millisecond, stop)
	proxy.SetMode(testcluster.Blackhole)
	require.Eventually(t, func() bool { return !conn.session.LeaseHeld(session) }, 30*time.Second, 5*time.Millisecond)
	lapsed := time.Now()
	time.Sleep(time.Second) // still well inside the session timeout
	healed := time.Now()
	proxy.SetMode(testcluster.Forward)
	require.Eventually(t, func() bool { return conn.session.LeaseHeld(session) }, 30*time.Second, 5*time.Millisecond)
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
	oneAtATime(t)
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 4, 200)
	group := testcluster.UniqueName("g-frozen")
	cfg := testConfig(c, group) // 4 s session
	deferred := frozenMember(t, c, cfg, topic,
		func(members int) { waitOwners(t, c, group, topic, 4, members) },
		func() { time.Sleep(2*cfg.ZooKeeperSessionTimeout + time.Second) })
	require.NotEmpty(t, deferred)
}

// frozenMember runs the frozen-member scenario of both modes on topic (4
// partitions): a child process "frozen" and a connector "peer" in cfg's
// group share it (waitMembers(2)) while messages are produced; the child
// is stopped (SIGSTOP) for as long as whileFrozen waits, then woken, and
// once both members share the topic again the production stops and every
// message must be delivered. The woken member must not hand out a message
// of a partition the peer took over before the peer's last delivery of it
// (checkFrozenMemberDeferred, whose partitions it returns), and the peer
// must lose nothing.
func frozenMember(t *testing.T, c *testcluster.Cluster, cfg Config, topic string, waitMembers func(members int), whileFrozen func()) map[int32]time.Time {
	t.Helper()
	col := newCollector()
	frozen := startChild(t, col, childSpec{Name: "frozen", Props: props(cfg), Topic: topic, Streams: 1})
	peer := newConnector(t, cfg)
	ctx := testwait.Context(t, 3*time.Minute)
	streams, err := peer.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col.read(ctx, "peer", streams[topic][0])
	waitMembers(2)

	stop := make(chan struct{})
	var once sync.Once
	stopProducing := func() { once.Do(func() { close(stop) }) }
	defer stopProducing()
	produced := produceWhile(t, c, topic, 200, 8, 50*time.Millisecond, stop)
	time.Sleep(time.Second)
	stopped := time.Now()
	require.NoError(t, frozen.cmd.Process.Signal(syscall.SIGSTOP))
	whileFrozen()
	resumed := time.Now()
	require.NoError(t, frozen.cmd.Process.Signal(syscall.SIGCONT))
	t.Logf("frozen for %v", resumed.Sub(stopped).Round(time.Millisecond))
	waitMembers(2)
	time.Sleep(2 * time.Second)
	stopProducing()
	n := <-produced
	rs := col.waitAll(t, 0, n, 2*time.Minute)

	deferred := checkFrozenMemberDeferred(t, rs, stopped, resumed)
	select {
	case err := <-peer.Errors():
		require.NotErrorIs(t, err, zkgroup.ErrOwnershipLost, "the peer lost nothing")
	default:
	}
	frozen.leave(t)
	return deferred
}

// checkFrozenMemberDeferred checks the deliveries rs of a member "frozen"
// from stopped to resumed and its peer "peer": for each partition the peer
// delivered after stopped, the woken member may deliver it again only
// after the peer's last delivery. It returns those partitions with the
// time of the peer's last delivery.
func checkFrozenMemberDeferred(t *testing.T, rs []record, stopped, resumed time.Time) map[int32]time.Time {
	t.Helper()
	peerLast := map[int32]time.Time{}
	for _, r := range rs {
		if r.Consumer == "peer" && r.At.After(stopped) && r.At.After(peerLast[r.Partition]) {
			peerLast[r.Partition] = r.At
		}
	}
	for _, r := range rs {
		last, taken := peerLast[r.Partition]
		if r.Consumer == "frozen" && taken && r.At.After(resumed) && !r.At.After(last) {
			t.Errorf("the woken member handed out offset %d of partition %d %v after SIGCONT, while the peer owned it (the peer delivered it until %v after SIGCONT)",
				r.Offset, r.Partition, r.At.Sub(resumed), last.Sub(resumed))
		}
	}
	return peerLast
}

// TestShutdownReturnsWhileZooKeeperIsUnreachable: Shutdown with a context
// that never ends must still return when ZooKeeper does not answer; it used
// to wait forever to release the owner nodes.
//
// Serial: under oneAtATime, beside the package's parallel tests and
// another suite, Shutdown took longer than its 14.5 s bound once.
func TestShutdownReturnsWhileZooKeeperIsUnreachable(t *testing.T) {
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 2, 50)
	group := testcluster.UniqueName("g-shut-cut")
	cfg, proxy := throughProxy(t, c, testConfig(c, group))
	conn, err := New(t.Context(), cfg)
	require.NoError(t, err)
	_, col := readAll(t, conn, topic, 50)

	proxy.SetMode(testcluster.Blackhole)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- conn.Shutdown(context.Background()) }()
	bound := cfg.ZooKeeperSessionTimeout + cfg.RebalanceBackoff + 10*time.Second
	select {
	case <-done:
		t.Logf("Shutdown returned after %v", time.Since(start).Round(time.Millisecond))
	case <-time.After(bound):
		proxy.SetMode(testcluster.Forward)
		<-done
		t.Fatalf("Shutdown did not return within %v while ZooKeeper was unreachable", bound)
	}
	col.wg.Wait()
}

// shutdownListener shuts its connector down from the listener's
// BeforeReleasingPartitions, passing Shutdown the call's context on the
// listener's goroutine or (elsewhere) a context derived from it on
// another goroutine that the listener waits for, and sends what the first
// Shutdown returned.
type shutdownListener struct {
	conn      *ConsumerConnector
	elsewhere bool
	returned  chan error // buffered, one
}

func (l *shutdownListener) BeforeReleasingPartitions(ctx context.Context, c *ConsumerConnector, _ map[string][]int32, _ bool) {
	if l.conn == nil {
		return
	}
	var err error
	if l.elsewhere {
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- c.Shutdown(sctx) }()
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			err = errors.New("Shutdown given the listener's context waited for the listener")
		}
	} else {
		err = c.Shutdown(ctx)
	}
	select {
	case l.returned <- err:
	default: // a later call, from the shutdown itself
	}
}

func (l *shutdownListener) BeforeStartingFetchers(context.Context, *ConsumerConnector, map[string][]int32) {
}

// awaitShutdownFromListener waits for what Shutdown, called from l, returned,
// then for the shutdown to complete in the background: col's streams end,
// Errors is closed, and a Shutdown called now returns its result.
func awaitShutdownFromListener(t *testing.T, ctx context.Context, l *shutdownListener, col *collector) {
	t.Helper()
	select {
	case err := <-l.returned:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Shutdown called from the listener did not return")
	}
	done := make(chan struct{})
	go func() { col.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the streams did not end after Shutdown from the listener")
	}
	require.Eventually(t, func() bool {
		for {
			select {
			case _, ok := <-l.conn.Errors():
				if !ok {
					return true
				}
			default:
				return false
			}
		}
	}, 30*time.Second, 10*time.Millisecond, "Errors was not closed after Shutdown from the listener")
	require.NoError(t, l.conn.Shutdown(ctx))
}

// TestShutdownFromListener calls Shutdown from a rebalance listener, as an
// application that decides to stop on a rebalance would, with the
// listener's context: it returns at once, instead of waiting for the
// rebalance that runs the listener, also when another goroutine calls it
// with a context derived from the listener's while the listener waits, and
// the shutdown completes once the listener has returned. With the eager protocol every rebalance calls the
// listener; with the cooperative one it is called when partitions move
// away, here to a second member that joins.
func TestShutdownFromListener(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		protocol  RebalanceProtocol
		elsewhere bool
	}{{RebalanceEager, false}, {RebalanceCooperative, false}, {RebalanceEager, true}} {
		name := tc.protocol.String()
		if tc.elsewhere {
			name += "/another goroutine"
		}
		t.Run(name, func(t *testing.T) { testShutdownFromListener(t, tc.protocol, tc.elsewhere) })
	}
}

func testShutdownFromListener(t *testing.T, protocol RebalanceProtocol, elsewhere bool) {
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 2, 20)
	group := testcluster.UniqueName("g-shut-listener")
	l := &shutdownListener{elsewhere: elsewhere, returned: make(chan error, 1)}
	cfg := testConfig(c, group)
	cfg.RebalanceProtocol = protocol
	conn, err := New(t.Context(), cfg, WithRebalanceListener(l))
	require.NoError(t, err)
	ctx, col := readAll(t, conn, topic, 20)
	l.conn = conn
	var second *ConsumerConnector
	if protocol == RebalanceEager {
		conn.member.Rebalance()
	} else {
		second = newConnector(t, cfg)
		_, err := second.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
	}
	awaitShutdownFromListener(t, ctx, l, col)
	if second != nil {
		require.NoError(t, second.Shutdown(ctx))
	}
	waitNoMembers(t, c, group)
}

// waitNoMembers waits until no member is registered in group.
func waitNoMembers(t *testing.T, c *testcluster.Cluster, group string) {
	t.Helper()
	s, err := zksession.Dial(context.Background(), zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
	require.NoError(t, err)
	defer s.Close()
	require.Eventually(t, func() bool {
		ids, err := s.Children(context.Background(), zkutil.ConsumerIDsPath(group))
		return err == nil && len(ids) == 0
	}, 30*time.Second, 50*time.Millisecond)
}

// TestSessionLossResumesFromOwnProgress: a member whose session expires
// before its consumption could be committed (here auto-commit is far off)
// gets its partitions back in the new session; it resumes after what it had
// consumed instead of redelivering everything since the last commit.
func TestSessionLossResumesFromOwnProgress(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 2, 300)
	group := testcluster.UniqueName("g-carry")
	cfg := testConfig(c, group)
	cfg.AutoCommitInterval = time.Hour
	tap := &testcluster.SessionTap{}
	conn := newConnector(t, cfg, WithDialer(tap.DialerFor(c.ZKServers())))
	ctx, col := readAll(t, conn, topic, 300)

	old := conn.session.ID()
	require.NoError(t, tap.Expire())
	require.Eventually(t, func() bool {
		gen := conn.member.Generation()
		return gen != nil && gen.SessionID != old
	}, time.Minute, 10*time.Millisecond)
	_, err := c.Produce(ctx, topic, 100, testcluster.ProduceOptions{Partition: -1, FirstSeq: 300})
	require.NoError(t, err)
	rs := col.waitAll(t, 0, 400, time.Minute)
	again := 0
	for _, n := range distinct(rs) {
		again += n - 1
	}
	// At most the message in hand when the session was lost.
	require.LessOrEqual(t, again, 1, "messages consumed before the session loss were delivered again")
}
