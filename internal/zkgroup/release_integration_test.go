package zkgroup

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestReleaseOfAnExpiredSessionDeletesNothing: a member claims owner nodes
// (recorded as held, so that their release deletes without a read); its
// session expires, ZooKeeper deletes the nodes, and a peer claims the same
// partitions, with nodes of the same version (0). A release bound to the
// expired session must delete nothing: the deletes are never sent on the
// session that replaced it. A release in the new session reads first and
// spares the peer's nodes too.
func TestReleaseOfAnExpiredSessionDeletesNothing(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tap := &testcluster.SessionTap{}
	s, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 4 * time.Second,
		ConnectionTimeout: 20 * time.Second, Dialer: tap.Dial})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	peer := dialObserver(t, c)

	group, topic := testcluster.UniqueName("g-release"), "t"
	me := zkutil.ConsumerThreadID{ConsumerID: group + "_me"}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for p := range int32(8) {
		mine[zkutil.TopicPartition{Topic: topic, Partition: p}] = me
	}
	old := s.ID()
	known := ownedNodes{}
	_, err = claim(ctx, s.Bind(old), group, mine, nil, known, 10*time.Second)
	require.NoError(t, err)
	require.Len(t, known, len(mine))

	require.NoError(t, tap.Expire())
	require.True(t, testwait.Until(30*time.Second, func() bool { id := s.ID(); return id != 0 && id != old }), "no new session")
	for tp := range mine {
		path := zkutil.OwnerPath(group, tp.Topic, tp.Partition)
		// Ephemeral nodes of the expired session may still be seen for a
		// moment by a server that has not applied the close yet.
		require.True(t, testwait.Until(10*time.Second, func() bool {
			return peer.CreateEphemeral(ctx, path, []byte("peer-0")) == nil
		}), "peer could not claim %s", path)
	}

	left, err := release(ctx, s.Bind(old), group, mine, ownedNodesCopy(known))
	require.NoError(t, err)
	require.Empty(t, left)
	requirePeerOwnsAll(t, ctx, peer, group, mine)

	left, err = release(ctx, s.Bind(s.ID()), group, mine, known)
	require.NoError(t, err)
	require.Empty(t, left)
	requirePeerOwnsAll(t, ctx, peer, group, mine)
}

func ownedNodesCopy(o ownedNodes) ownedNodes {
	out := ownedNodes{}
	for tp, n := range o {
		out[tp] = n
	}
	return out
}

// requirePeerOwnsAll checks that every owner node of mine is peer's.
func requirePeerOwnsAll(t *testing.T, ctx context.Context, peer *zksession.Session, group string, mine map[zkutil.TopicPartition]zkutil.ConsumerThreadID) {
	t.Helper()
	require.NoError(t, peer.Sync(ctx, zkutil.OwnersPath(group)))
	for tp := range mine {
		data, stat, err := peer.Get(ctx, zkutil.OwnerPath(group, tp.Topic, tp.Partition))
		require.NoError(t, err, "the peer's owner node of %s was deleted", tp)
		require.Equal(t, "peer-0", string(data))
		require.Equal(t, peer.ID(), stat.EphemeralOwner)
	}
}
