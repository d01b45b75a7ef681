package zkgroup

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestRegistrationCacheReadsOnlyWhatChanged reads a group of three members
// through the cache, against ZooKeeper: a second reading reads no
// registration; a member that re-registers under the same id with another
// subscription (delete, create: the children list looks the same) is read
// again, at once, and its new subscription used; a member that leaves is
// dropped. Without the cache every reading reads every registration.
func TestRegistrationCacheReadsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, w := dialObserver(t, c), dialObserver(t, c)
	group := testcluster.UniqueName("g-regcache")
	t1, t2 := testcluster.UniqueName("t1"), testcluster.UniqueName("t2")
	ids := zkutil.ConsumerIDsPath(group)
	require.NoError(t, s.EnsurePath(ctx, ids))
	register := func(z *zksession.Session, id string, sub map[string]int) {
		t.Helper()
		data, err := zkutil.EncodeRegistration(StaticSubscription(sub).registration(time.Now(), strategyname.Range))
		require.NoError(t, err)
		require.NoError(t, z.CreateEphemeral(ctx, zkutil.ConsumerIDPath(group, id), data))
	}
	a, b, m3 := group+"_a", group+"_b", group+"_c"
	register(s, a, map[string]int{t1: 1})
	register(w, b, map[string]int{t1: 1})
	register(w, m3, map[string]int{t1: 1})
	// s reads what w wrote through another server of the ensemble: it
	// catches up with the leader first.
	require.NoError(t, s.Sync(ctx, ids))

	var ops opCounter
	cache := newRegistrationCache(group)
	read := func() zkassign.AssignmentContext {
		t.Helper()
		ops.reset()
		v, err := readGroup(ctx, cache.reader(countingZK{ZooKeeper: Session(s), n: &ops}), group, a, StaticSubscription(map[string]int{t1: 1}), true, strategyname.Range)
		require.NoError(t, err)
		return v.ctx
	}
	// Gets besides the registrations: one per topic consumed (its
	// partition map; these topics do not exist, which is fine here).
	topicGets := func(v zkassign.AssignmentContext) int64 { return int64(len(v.ConsumersForTopic)) }

	v := read()
	require.Equal(t, []string{a, b, m3}, v.Consumers)
	require.Equal(t, 3+topicGets(v), ops.gets.Load(), "first reading: every registration")
	v = read()
	require.Equal(t, []string{a, b, m3}, v.Consumers)
	require.Equal(t, topicGets(v), ops.gets.Load(), "unchanged registrations read again")

	// b re-registers with another subscription, as a restart with a fixed
	// consumer.id does.
	require.NoError(t, w.Delete(ctx, zkutil.ConsumerIDPath(group, b), -1))
	register(w, b, map[string]int{t1: 1, t2: 1})
	require.NoError(t, s.Sync(ctx, ids))
	v = read()
	require.Equal(t, []zkutil.ConsumerThreadID{{ConsumerID: b}}, v.ConsumersForTopic[t2], "b's new subscription not seen")
	require.Equal(t, 1+topicGets(v), ops.gets.Load(), "only b is read again")

	require.NoError(t, w.Delete(ctx, zkutil.ConsumerIDPath(group, m3), -1))
	require.NoError(t, s.Sync(ctx, ids))
	v = read()
	require.Equal(t, []string{a, b}, v.Consumers)
	require.Equal(t, topicGets(v), ops.gets.Load())
	cache.mu.Lock()
	cached := slices.Sorted(func(yield func(string) bool) {
		for p := range cache.entries {
			if !yield(p) {
				return
			}
		}
	})
	cache.mu.Unlock()
	require.Equal(t, []string{zkutil.ConsumerIDPath(group, a), zkutil.ConsumerIDPath(group, b)}, cached, "the member that left is still cached")
}

// TestRegistrationCacheKeepsPartitionMapsAndListing reads a group through
// the cache, against ZooKeeper, with a topic that exists: the topic's
// partition map is read once, not at every reading, and again (its new
// partitions seen) once partitions are added; the listing of the members
// that came with a watch is used instead of a second listing until the
// membership changes. Without them every member reads (and decodes) every
// partition map and lists the group twice on every rebalance.
func TestRegistrationCacheKeepsPartitionMapsAndListing(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, w := dialObserver(t, c), dialObserver(t, c)
	group := testcluster.UniqueName("g-topiccache")
	topic := testcluster.UniqueName("t-topiccache")
	require.NoError(t, c.CreateTopic(ctx, topic, 2, 1))
	ids := zkutil.ConsumerIDsPath(group)
	require.NoError(t, s.EnsurePath(ctx, ids))
	register := func(z *zksession.Session, id string) {
		t.Helper()
		data, err := zkutil.EncodeRegistration(StaticSubscription(map[string]int{topic: 1}).registration(time.Now(), strategyname.Range))
		require.NoError(t, err)
		require.NoError(t, z.CreateEphemeral(ctx, zkutil.ConsumerIDPath(group, id), data))
	}
	a, b := group+"_a", group+"_b"
	register(s, a)
	// The broker wrote the topic's partition map through its own
	// session: s catches up with the leader before reading it.
	require.NoError(t, s.Sync(ctx, zkbrokers.TopicPath(topic)))

	var ops opCounter
	cache := newRegistrationCache(group)
	read := func() zkassign.AssignmentContext {
		t.Helper()
		ops.reset()
		v, err := readGroup(ctx, cache.reader(countingZK{ZooKeeper: Session(s), n: &ops}), group, a, StaticSubscription(map[string]int{topic: 1}), true, strategyname.Range)
		require.NoError(t, err)
		return v.ctx
	}
	v := read()
	require.Equal(t, []int32{0, 1}, v.PartitionsForTopic[topic])
	require.Equal(t, int64(2), ops.gets.Load(), "first reading: the registration and the partition map")
	v.PartitionsForTopic[topic][0] = 7 // the assignor's own copy
	v = read()
	require.Equal(t, []int32{0, 1}, v.PartitionsForTopic[topic])
	require.Equal(t, int64(0), ops.gets.Load(), "the unchanged partition map is read again")

	require.NoError(t, c.AddPartitions(ctx, topic, 3))
	require.Eventually(t, func() bool {
		require.NoError(t, s.Sync(ctx, zkbrokers.TopicPath(topic)))
		return slices.Equal(read().PartitionsForTopic[topic], []int32{0, 1, 2})
	}, time.Minute, 50*time.Millisecond, "the added partition is not seen")
	read()
	require.Equal(t, int64(0), ops.gets.Load(), "the new partition map is read again")

	// The listing that comes with the membership watch replaces the
	// reading's own, until the membership changes.
	mark := s.WatchMark(ids)
	children, _, err := s.ChildrenW(ctx, ids)
	require.NoError(t, err)
	cache.keepListing(mark, children)
	v = read()
	require.Equal(t, []string{a}, v.Consumers)
	require.Equal(t, int64(0), ops.children.Load(), "the group listed again")
	register(w, b)
	require.NoError(t, s.Sync(ctx, ids))
	v = read()
	require.Equal(t, []string{a, b}, v.Consumers, "the new member not seen")
	require.Equal(t, int64(1), ops.children.Load())
}
