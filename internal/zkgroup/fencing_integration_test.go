package zkgroup

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestPartitionedMemberFencesBeforeTakeover cuts one member off ZooKeeper
// (its traffic is blackholed, the process keeps running, like a network
// partition). The lease of its session, which fences delivery and commits
// of its partitions, must lapse before its session expires and the peer
// takes the partitions over; when the network heals it learns that its
// session expired, drops the generation as lost and rejoins.
func TestPartitionedMemberFencesBeforeTakeover(t *testing.T) {
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 4)
	topics := map[string]int{topic: 1}
	group := testcluster.UniqueName("g-fence")

	proxy, err := c.NewZooKeeperProxies()
	require.NoError(t, err)
	t.Cleanup(func() { proxy.Close() }) // after the members' cleanups

	cut := startMember(t, c, group, group+"_cut", memberOpts{topics: topics, connect: proxy.Connect()})
	peer := startMember(t, c, group, group+"_peer", memberOpts{topics: topics})
	waitConverged(t, observer, group, topics, strategyname.Range, 2, cut, peer)
	cut.rec.mu.Lock()
	session := cut.rec.session
	cut.rec.mu.Unlock()
	require.True(t, cut.session.LeaseHeld(session))

	start := time.Now()
	proxy.SetMode(testcluster.Blackhole)
	var fencedAt, takeover time.Time
	require.True(t, testwait.Until(60*time.Second, func() bool {
		if fencedAt.IsZero() && !cut.session.LeaseHeld(session) {
			fencedAt = time.Now()
		}
		peer.rec.mu.Lock()
		defer peer.rec.mu.Unlock()
		for _, h := range peer.rec.history {
			if h.at.After(start) && h.owned == 4 {
				takeover = h.at
				return true
			}
		}
		return false
	}), "the peer takes over every partition once the cut member's session expires")
	require.False(t, fencedAt.IsZero(), "the cut member's lease lapsed")
	require.True(t, fencedAt.Before(takeover), "fenced at +%v, but the peer took over at +%v", fencedAt.Sub(start), takeover.Sub(start))
	t.Logf("cut at 0: lease lapsed at +%v, peer took over at +%v", fencedAt.Sub(start).Round(time.Millisecond), takeover.Sub(start).Round(time.Millisecond))

	proxy.SetMode(testcluster.Forward)
	waitConverged(t, observer, group, topics, strategyname.Range, 2, cut, peer)
	cut.rec.mu.Lock()
	lost := cut.rec.lost
	cut.rec.mu.Unlock()
	require.Equal(t, 1, lost, "the generation of the expired session ended as lost, once")
}
