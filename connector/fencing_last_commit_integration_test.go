package connector

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestLastCommitCutByALapsedLeaseIsMadeAgain: ZooKeeper mode, offsets in
// Kafka. Shutdown's last commit is in flight to a broker that does not
// answer when the member's ZooKeeper lease lapses (ZooKeeper cut off for
// longer than the lease, shorter than the session): the fence cuts the
// commit off. The session lives on, so once ZooKeeper and the broker
// answer again the commit is made again, and Shutdown succeeds with the
// consumed offset committed. (The roundrobin chaos topology found Shutdown
// failing here, the offsets left behind.)
func TestLastCommitCutByALapsedLeaseIsMadeAgain(t *testing.T) {
	oneAtATime(t)
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	const n = 50
	topic := newTopic(t, c, 1, n)
	group := testcluster.UniqueName("g-lastcommit")

	base := testConfig(c, group)
	base.ZooKeeperSessionTimeout = 8 * time.Second // a lease of 6 s, 2 s before the session expires
	base.OffsetsStorage = OffsetsStorageKafka
	base.DualCommitEnabled = DualCommitOff
	base.AutoCommitInterval = time.Hour            // only revoke's last commit
	base.OffsetsChannelSocketTimeout = time.Minute // the lease, not the socket timeout, ends the wait
	cfg, zk := throughProxy(t, c, base)
	brokers := newBrokerProxies(t, c)
	conn, err := New(ctx, cfg, WithDialer(brokers))
	require.NoError(t, err)
	t.Cleanup(func() {
		zk.SetMode(testcluster.Forward)
		brokers.setMode(testcluster.Forward)
	})
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	s := streams[topic][0]
	for range n {
		msg, err := s.Next(ctx)
		require.NoError(t, err)
		s.MarkConsumed(msg)
	}

	session := conn.session.ID()
	// The broker path and ZooKeeper are cut; Shutdown starts while the
	// lease still holds, so its last commit goes out and waits on the
	// broker path; the lease then lapses, and the fence cuts the commit
	// off. ZooKeeper comes back at once, within the session.
	brokers.setMode(testcluster.Blackhole)
	zk.SetMode(testcluster.Blackhole)
	time.Sleep(3 * time.Second) // of a lease of 6 s
	require.True(t, conn.session.LeaseHeld(session), "the lease must hold when the last commit is sent")
	done := make(chan error, 1)
	go func() { done <- conn.Shutdown(ctx) }()
	require.Eventually(t, func() bool { return !conn.session.LeaseHeld(session) }, 15*time.Second, time.Millisecond)
	zk.SetMode(testcluster.Forward)
	require.Eventually(t, func() bool { return conn.session.LeaseHeld(session) }, 10*time.Second, time.Millisecond,
		"the session did not come back")
	brokers.setMode(testcluster.Forward)
	select {
	case err := <-done:
		require.NoError(t, err, "Shutdown")
	case <-ctx.Done():
		t.Fatal("Shutdown did not return")
	}
	require.Equal(t, map[int32]int64{0: n}, fetchKafkaOffsets(t, c, group, topic, 1))
}
