package rebalance

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testcluster"
)

// TestPartitionedMemberFencesBeforeTakeover cuts one member off ZooKeeper
// (its traffic is blackholed, the process keeps running, like a long GC
// pause or a network partition). It must stop delivering its partitions
// before its session expires, so that it never consumes alongside the
// member that takes them over; when the network heals it rejoins.
func TestPartitionedMemberFencesBeforeTakeover(t *testing.T) {
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 4)
	topics := map[string]int{topic: 1}
	group := testcluster.UniqueName("g-fence")

	proxy, err := testcluster.NewProxy(c.ZKServer())
	require.NoError(t, err)
	t.Cleanup(func() { proxy.Close() }) // after the members' cleanups

	// Session 4 s: the client notices the cut after up to 2/3 of it; a
	// grace of 500 ms fences well before the server expires the session.
	cut := startMember(t, c, group, group+"_cut", memberOpts{topics: topics, connect: proxy.Addr() + c.Chroot(), grace: 500 * time.Millisecond})
	peer := startMember(t, c, group, group+"_peer", memberOpts{topics: topics})
	waitConverged(t, observer, group, topics, StrategyRange, 2, cut, peer)

	start := time.Now()
	proxy.SetMode(testcluster.Blackhole)
	var takeover time.Time
	require.True(t, waitUntil(60*time.Second, func() bool {
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
	cut.rec.mu.Lock()
	fencedAt := cut.rec.lostAt
	cut.rec.mu.Unlock()
	require.False(t, fencedAt.IsZero(), "the cut member fenced itself")
	require.True(t, fencedAt.Before(takeover), "fenced at +%v, but the peer took over at +%v", fencedAt.Sub(start), takeover.Sub(start))
	t.Logf("cut at 0: fenced at +%v, peer took over at +%v", fencedAt.Sub(start).Round(time.Millisecond), takeover.Sub(start).Round(time.Millisecond))

	proxy.SetMode(testcluster.Forward)
	waitConverged(t, observer, group, topics, StrategyRange, 2, cut, peer)
}
