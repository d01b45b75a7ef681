package kafkagroup

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestTwoMembersShareAndLeave: two members split a topic by range; when
// one leaves (LeaveGroup on Close), the other gets every partition at
// once, well before the session timeout would have removed it.
func TestTwoMembersShareAndLeave(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := createTopic(t, c, "kg-share", 6)
	group := testcluster.UniqueName("kg-share")
	cfg := testConfig(c, group, topic)
	cfg.SessionTimeout = 30 * time.Second
	r1 := startRunner(t, cfg)
	r2 := startRunner(t, cfg)
	want := map[string]int32{topic: 6}
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(want, r1, r2) }, "two members sharing the topic")
	g1, g2 := r1.live(), r2.live()
	require.Equal(t, 3, g1.Partitions())
	require.Equal(t, 3, g2.Partitions())
	require.Equal(t, "range", g1.Protocol)
	require.NotEqual(t, g1.Leader, g2.Leader, "one leader")

	// The coordinator stores what the members believe they own.
	state, desc := describe(t, c, group)
	require.Equal(t, "Stable", state)
	require.Equal(t, map[string]map[string][]int32{g1.MemberID: g1.Assignment, g2.MemberID: g2.Assignment}, desc)

	left := time.Now()
	r2.stop()
	testwait.WaitFor(t, 15*time.Second, func() bool { return settled(want, r1) }, "the remaining member to own every partition")
	require.Less(t, time.Since(left), 15*time.Second)
	require.ErrorIs(t, context.Cause(g1.Context()), ErrRebalanceStarted)
	require.ErrorIs(t, context.Cause(g2.Context()), ErrMemberClosed)
	require.Greater(t, r1.live().ID, g1.ID)
}

// TestKilledMemberRemovedAfterSessionTimeout: a member that stops
// heartbeating without LeaveGroup keeps its partitions until
// session.timeout.ms passes; then the coordinator removes it and the
// other member gets everything.
func TestKilledMemberRemovedAfterSessionTimeout(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := createTopic(t, c, "kg-kill", 4)
	group := testcluster.UniqueName("kg-kill")
	cfg := testConfig(c, group, topic)
	r1 := startRunner(t, cfg)
	r2 := startRunner(t, cfg)
	want := map[string]int32{topic: 4}
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(want, r1, r2) }, "two members sharing the topic")
	g1 := r1.live()

	killed := time.Now()
	r2.crash()
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(want, r1) }, "the survivor to own every partition")
	took := time.Since(killed)
	t.Logf("reassigned %v after the kill", took)
	require.GreaterOrEqual(t, took, cfg.SessionTimeout-time.Second, "reassigned before the session timeout")
	require.ErrorIs(t, g1.Err(), ErrRebalanceStarted)
}

// TestPartitionGrowthRebalances: the leader notices partitions added to a
// subscribed topic (its metadata check) and rejoins, and the new
// partitions are assigned.
func TestPartitionGrowthRebalances(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := createTopic(t, c, "kg-grow", 2)
	group := testcluster.UniqueName("kg-grow")
	cfg := testConfig(c, group, topic)
	cfg.MetadataMaxAge = 500 * time.Millisecond
	r1 := startRunner(t, cfg)
	r2 := startRunner(t, cfg)
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(map[string]int32{topic: 2}, r1, r2) }, "two members sharing the topic")
	before := r1.live().ID

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, c.AddPartitions(ctx, topic, 5))
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(map[string]int32{topic: 5}, r1, r2) }, "the five partitions assigned")
	require.Greater(t, r1.live().ID, before)
}

// TestWildcardSubscriptionFollowsNewTopics: a member subscribed by a
// pattern rejoins when a matching topic is created and gets its partitions.
func TestWildcardSubscriptionFollowsNewTopics(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	prefix := testcluster.UniqueName("kgwild")
	t1 := createTopic(t, c, prefix+"-a", 2)
	group := testcluster.UniqueName("kg-wild")
	cfg := testConfig(c, group)
	cfg.Topics = nil
	f, err := rebalanceFilter(prefix + `-.*`)
	require.NoError(t, err)
	cfg.Filter = f
	cfg.MetadataMaxAge = 500 * time.Millisecond
	r := startRunner(t, cfg)
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(map[string]int32{t1: 2}, r) }, "the first topic assigned")
	t2 := createTopic(t, c, prefix+"-b", 3)
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(map[string]int32{t1: 2, t2: 3}, r) }, "both topics assigned")
}

// TestFencedCommitRejected: commits carry the generation; once a member
// lost its membership (killed, removed after the session timeout) or the
// group moved to a newer generation, its commits are refused with
// ErrCommitFenced, while the current generation's commits land.
func TestFencedCommitRejected(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := createTopic(t, c, "kg-fence", 2)
	group := testcluster.UniqueName("kg-fence")
	cfg := testConfig(c, group, topic)
	r1 := startRunner(t, cfg)
	r2 := startRunner(t, cfg)
	want := map[string]int32{topic: 2}
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(want, r1, r2) }, "two members sharing the topic")
	g1, g2 := r1.live(), r2.live()
	tp1 := zkutil.TopicPartition{Topic: g1.Topics()[0], Partition: g1.Assignment[g1.Topics()[0]][0]}
	tp2 := zkutil.TopicPartition{Topic: g2.Topics()[0], Partition: g2.Assignment[g2.Topics()[0]][0]}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, r1.m.Commit(ctx, g1, map[zkutil.TopicPartition]int64{tp1: 10}))
	require.NoError(t, r2.m.Commit(ctx, g2, map[zkutil.TopicPartition]int64{tp2: 20}))

	require.True(t, g1.LeaseHeld())
	require.True(t, g2.LeaseHeld())

	// Member 2 stops heartbeating but stays open, as a member paused for
	// longer than the session timeout would. Its lease lapses before the
	// coordinator can give its partitions away, and stays lapsed.
	stopped := time.Now()
	r2.m.stopBackground()
	testwait.WaitFor(t, 30*time.Second, func() bool { return !g2.LeaseHeld() }, "member 2's lease to lapse")
	// When the lease ended, read from the lease itself rather than from
	// when this goroutine saw it: on a loaded machine the poll may run
	// late, the lease's end does not.
	lapsed := g2.lease.Until().Sub(stopped)
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(want, r1) }, "member 1 to own both partitions")
	t.Logf("lease lapsed %v after the last heartbeats, partitions moved %v after", lapsed, time.Since(stopped))
	require.Less(t, lapsed, time.Duration(float64(cfg.SessionTimeout)*leaseFraction)+time.Second)
	require.False(t, g2.LeaseHeld())
	require.True(t, r1.live().LeaseHeld())
	err := r2.m.Commit(ctx, g2, map[zkutil.TopicPartition]int64{tp2: 99})
	require.ErrorIs(t, err, ErrCommitFenced)
	require.ErrorIs(t, err, sarama.ErrUnknownMemberId)

	// Member 1's previous generation is stale too.
	err = r1.m.Commit(ctx, g1, map[zkutil.TopicPartition]int64{tp1: 98})
	require.ErrorIs(t, err, ErrCommitFenced)
	require.ErrorIs(t, err, sarama.ErrIllegalGeneration)

	cur := r1.live()
	require.NoError(t, r1.m.Commit(ctx, cur, map[zkutil.TopicPartition]int64{tp1: 11, tp2: 21}))
	got, err := r1.m.Fetch(ctx, []zkutil.TopicPartition{tp1, tp2, {Topic: topic, Partition: 7}})
	require.NoError(t, err)
	require.Equal(t, map[zkutil.TopicPartition]int64{tp1: 11, tp2: 21, {Topic: topic, Partition: 7}: zkutil.NoOffset}, got)
	require.False(t, errors.Is(err, ErrCommitFenced))
}

// TestCommitAfterRebalanceStarted: a member told ErrRebalanceStarted still
// belongs to its generation until it rejoins, so the commit the connector
// makes at that moment lands.
func TestCommitAfterRebalanceStarted(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := createTopic(t, c, "kg-revoke", 4)
	group := testcluster.UniqueName("kg-revoke")
	cfg := testConfig(c, group, topic)
	r1 := startRunner(t, cfg)
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(map[string]int32{topic: 4}, r1) }, "the first member to own the topic")
	commits := make(chan error, 10)
	r1.mu.Lock()
	r1.onEnd = func(g *Generation) {
		if !errors.Is(g.Err(), ErrRebalanceStarted) {
			commits <- g.Err()
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		offsets := map[zkutil.TopicPartition]int64{}
		for topic, ps := range g.Assignment {
			for _, p := range ps {
				offsets[zkutil.TopicPartition{Topic: topic, Partition: p}] = int64(100 + p)
			}
		}
		commits <- r1.m.Commit(ctx, g, offsets)
	}
	r1.mu.Unlock()

	r2 := startRunner(t, cfg)
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(map[string]int32{topic: 4}, r1, r2) }, "two members sharing the topic")
	select {
	case err := <-commits:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("no commit at the end of the generation")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var tps []zkutil.TopicPartition
	want := map[zkutil.TopicPartition]int64{}
	for p := range int32(4) {
		tp := zkutil.TopicPartition{Topic: topic, Partition: p}
		tps = append(tps, tp)
		want[tp] = int64(100 + p)
	}
	got, err := r2.m.Fetch(ctx, tps)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// TestRoundRobinProtocol: members preferring roundrobin get it, computed as
// Java's RoundRobinAssignor does.
func TestRoundRobinProtocol(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := createTopic(t, c, "kg-rr", 4)
	group := testcluster.UniqueName("kg-rr")
	cfg := testConfig(c, group, topic)
	cfg.Assignors = []string{"roundrobin", "range"}
	r1 := startRunner(t, cfg)
	r2 := startRunner(t, cfg)
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(map[string]int32{topic: 4}, r1, r2) }, "two members sharing the topic")
	g1, g2 := r1.live(), r2.live()
	require.Equal(t, "roundrobin", g1.Protocol)
	first, second := g1, g2
	if g2.MemberID < g1.MemberID {
		first, second = g2, g1
	}
	require.Equal(t, []int32{0, 2}, first.Assignment[topic])
	require.Equal(t, []int32{1, 3}, second.Assignment[topic])
}

// TestLeaveEndsMembershipAndRejoins: Leave sends LeaveGroup without closing
// the member: its generation ends with ErrMembershipLost and its lease at
// once, the other member gets every partition, and the next Join joins as
// a new member.
func TestLeaveEndsMembershipAndRejoins(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := createTopic(t, c, "kg-leave", 2)
	group := testcluster.UniqueName("kg-leave")
	cfg := testConfig(c, group, topic)
	r1 := startRunner(t, cfg)
	m2, err := New(cfg)
	require.NoError(t, err)
	defer m2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want := map[string]int32{topic: 2}
	var g2 *Generation
	testwait.WaitFor(t, 30*time.Second, func() bool {
		if g2 == nil || g2.Err() != nil {
			if g2, err = m2.Join(ctx); err != nil {
				return false
			}
		}
		g1 := r1.live()
		return g1 != nil && g1.Partitions() == 1 && g2.Partitions() == 1 && g2.Err() == nil
	}, "two members sharing the topic")
	old := g2.MemberID
	require.NoError(t, m2.Leave())
	require.ErrorIs(t, g2.Err(), ErrMembershipLost)
	require.False(t, g2.LeaseHeld())
	testwait.WaitFor(t, 15*time.Second, func() bool { return settled(want, r1) }, "the other member to own both partitions")
	g3, err := m2.Join(ctx)
	require.NoError(t, err)
	require.NotEqual(t, old, g3.MemberID, "a new member id after leaving")
}
