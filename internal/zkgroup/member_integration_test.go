package zkgroup

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

func newTopic(t *testing.T, c *testcluster.Cluster, partitions int32) string {
	t.Helper()
	return testcluster.NewTopic(t, c, testcluster.TopicSpec{Prefix: "rb", Partitions: partitions})
}

// TestGroupConvergesAcrossProcesses runs members in this process and in
// another OS process, under both strategies, and checks that every owner
// node is exactly what the assignor predicts; then a member leaves
// gracefully and the group converges again without it.
func TestGroupConvergesAcrossProcesses(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	for _, strategy := range []string{strategyname.Range, strategyname.RoundRobin} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			topicA, topicB := newTopic(t, c, 12), newTopic(t, c, 5)
			topics := map[string]int{topicA: 2, topicB: 1}
			group := testcluster.UniqueName("g-" + strategy)
			m1 := startMember(t, c, group, group+"_m1", memberOpts{strategy: strategy, topics: topics})
			m2 := startMember(t, c, group, group+"_m2", memberOpts{strategy: strategy, topics: map[string]int{topicA: 3, topicB: 1}})
			ch := startChild(t, childSpec{ZKConnect: c.ZKConnect(), Group: group, ConsumerID: group + "_child", Topics: topics, Strategy: strategy})
			owners := waitConverged(t, observer, group, topics, strategy, 3, m1, m2)
			t.Logf("%s: 3 members own %d partitions", strategy, len(owners))
			seen := map[string]bool{}
			for _, o := range owners {
				seen[o[:len(o)-2]] = true
			}
			require.True(t, seen[ch.id], "the member in the other process owns partitions: %v", owners)

			ch.leave(t)
			waitConverged(t, observer, group, topics, strategy, 2, m1, m2)
		})
	}
}

// TestKilledMemberIsReplaced: a member killed with SIGKILL keeps its
// partitions until its session times out; then the others take them over.
func TestKilledMemberIsReplaced(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 8)
	topics := map[string]int{topic: 1}
	group := testcluster.UniqueName("g-kill")
	m1 := startMember(t, c, group, group+"_m1", memberOpts{topics: topics})
	ch := startChild(t, childSpec{ZKConnect: c.ZKConnect(), Group: group, ConsumerID: group + "_child", Topics: topics, Strategy: strategyname.Range})
	waitConverged(t, observer, group, topics, strategyname.Range, 2, m1)
	require.Len(t, m1.rec.snapshot(), 4)

	ch.kill(t)
	owners := waitConverged(t, observer, group, topics, strategyname.Range, 1, m1)
	require.Len(t, owners, 8)
	require.Len(t, m1.rec.snapshot(), 8)
}

// TestSessionExpiryRejoins expires one member's ZooKeeper session: it drops
// its partitions as lost, registers again in the new session, and the group
// converges again.
func TestSessionExpiryRejoins(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 6)
	topics := map[string]int{topic: 1}
	group := testcluster.UniqueName("g-expire")
	m1 := startMember(t, c, group, group+"_m1", memberOpts{topics: topics})
	m2 := startMember(t, c, group, group+"_m2", memberOpts{topics: topics})
	waitConverged(t, observer, group, topics, strategyname.Range, 2, m1, m2)
	oldSession := m1.session.ID()

	require.NoError(t, m1.tap.Expire())
	require.True(t, testwait.Until(30*time.Second, func() bool {
		m1.rec.mu.Lock()
		defer m1.rec.mu.Unlock()
		return m1.rec.lost > 0
	}), "the expired member revokes its generation as lost")
	waitConverged(t, observer, group, topics, strategyname.Range, 2, m1, m2)
	require.NotEqual(t, oldSession, m1.session.ID())
	gen := m1.Generation()
	require.NotNil(t, gen)
	require.Equal(t, m1.session.ID(), gen.SessionID)
}

// TestPartitionIncreaseRebalances: adding partitions to a subscribed topic
// triggers a rebalance through the topic's data watch.
func TestPartitionIncreaseRebalances(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 4)
	topics := map[string]int{topic: 2}
	group := testcluster.UniqueName("g-grow")
	m1 := startMember(t, c, group, group+"_m1", memberOpts{topics: topics})
	m2 := startMember(t, c, group, group+"_m2", memberOpts{topics: topics})
	waitConverged(t, observer, group, topics, strategyname.Range, 2, m1, m2)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, c.AddPartitions(ctx, topic, 10))
	owners := waitConverged(t, observer, group, topics, strategyname.Range, 2, m1, m2)
	require.Len(t, owners, 10)
}

// TestTwentyMembersAtOnce starts 20 members concurrently: the herd must
// settle with every partition owned and every member holding its share.
func TestTwentyMembersAtOnce(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 32)
	topics := map[string]int{topic: 1}
	group := testcluster.UniqueName("g-herd")
	members := make([]*testMember, 20)
	var wg sync.WaitGroup
	for i := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			members[i] = startMember(t, c, group, fmt.Sprintf("%s_m%02d", group, i), memberOpts{topics: topics})
		}()
	}
	wg.Wait()
	owners := waitConverged(t, observer, group, topics, strategyname.Range, 20, members...)
	require.Len(t, owners, 32)
	for _, m := range members {
		n := len(m.rec.snapshot())
		require.True(t, n == 1 || n == 2, "member %s owns %d partitions", m.id, n)
	}
}

// TestBrokenRegistrationIsIgnored: a member whose registration is garbage is
// reported and left out; the rest of the group still rebalances.
func TestBrokenRegistrationIsIgnored(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 4)
	topics := map[string]int{topic: 1}
	group := testcluster.UniqueName("g-broken")
	ctx := context.Background()
	require.NoError(t, observer.CreateEphemeral(ctx, zkutil.ConsumerIDPath(group, group+"_garbage"),
		[]byte(`{"version":1,"subscription":{"`+topic+`":0},"pattern":"static"}`)))
	m1 := startMember(t, c, group, group+"_m1", memberOpts{topics: topics})
	m2 := startMember(t, c, group, group+"_m2", memberOpts{topics: topics})
	var decodeErr *zkutil.DecodeError
	select {
	case err := <-m1.errs:
		require.True(t, errors.As(err, &decodeErr), "got %v", err)
		require.Contains(t, decodeErr.Path, "_garbage")
	case <-time.After(30 * time.Second):
		t.Fatal("the broken registration was not reported")
	}
	require.True(t, testwait.Until(60*time.Second, func() bool {
		return len(m1.rec.snapshot()) == 2 && len(m2.rec.snapshot()) == 2
	}), "members split the partitions around the broken one: %v %v", m1.rec.snapshot(), m2.rec.snapshot())
}

// TestWildcardMemberFollowsNewTopics: a whitelist member picks up a
// matching topic created after it started.
func TestWildcardMemberFollowsNewTopics(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	prefix := testcluster.UniqueName("wild")
	filter, err := topicfilter.New(zkutil.PatternWhitelist, prefix+`-.*`)
	require.NoError(t, err)
	group := testcluster.UniqueName("g-wild")
	m := startMember(t, c, group, group+"_m1", memberOpts{filter: filter, streams: 2})
	require.Empty(t, m.rec.snapshot())

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, c.CreateTopic(ctx, prefix+"-a", 3, 1))
	require.True(t, testwait.Until(60*time.Second, func() bool { return len(m.rec.snapshot()) == 3 }), "new topic picked up: %v", m.rec.snapshot())
	require.NoError(t, c.CreateTopic(ctx, prefix+"-b", 2, 1))
	require.True(t, testwait.Until(60*time.Second, func() bool { return len(m.rec.snapshot()) == 5 }), "second topic picked up: %v", m.rec.snapshot())
}
