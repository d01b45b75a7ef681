package kafkagroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestStaticMemberRestartKeepsAssignment: a static member (group.instance.id)
// does not leave on Close; restarted with the same instance id within the
// session timeout, it gets its old partitions back under a new member id,
// and the other member's generation goes on undisturbed (KIP-345).
func TestStaticMemberRestartKeepsAssignment(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := createTopic(t, c, "kg-static", 4)
	group := testcluster.UniqueName("kg-static")
	cfgA := testConfig(c, group, topic)
	cfgA.InstanceID = "instance-a"
	cfgA.SessionTimeout = 20 * time.Second
	cfgB := cfgA
	cfgB.InstanceID = "instance-b"
	a := startRunner(t, cfgA)
	b := startRunner(t, cfgB)
	want := map[string]int32{topic: 4}
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(want, a, b) }, "two static members sharing the topic")
	ga, gb := a.live(), b.live()
	// Static members sort by instance id: a gets the first range.
	require.Equal(t, []int32{0, 1}, ga.Assignment[topic])
	require.Equal(t, []int32{2, 3}, gb.Assignment[topic])

	a.stop() // no LeaveGroup for a static member
	waitAnsweredSince(t, gb, time.Now())
	require.NoError(t, gb.Err(), "closing a static member rebalanced the group")

	a2 := startRunner(t, cfgA)
	testwait.WaitFor(t, 30*time.Second, func() bool { return a2.live() != nil }, "the restarted member back in the group")
	g := a2.live()
	require.NotEqual(t, ga.MemberID, g.MemberID)
	require.Equal(t, ga.Assignment, g.Assignment)
	require.Equal(t, gb.ID, g.ID, "the restart started no new generation")
	waitAnsweredSince(t, gb, time.Now())
	require.NoError(t, gb.Err(), "the restart rebalanced the group")
}

// waitAnsweredSince waits until the coordinator has answered a heartbeat
// of g sent after since, or until g has ended. Had the group begun to
// rebalance before since, that heartbeat's answer would be
// REBALANCE_IN_PROGRESS, which ends g (ErrRebalanceStarted) and renews
// nothing: a live g afterwards shows the group did not rebalance. Only an
// answer without error renews the lease, from the heartbeat's send time.
func waitAnsweredSince(t *testing.T, g *Generation, since time.Time) {
	t.Helper()
	testwait.WaitFor(t, 30*time.Second, func() bool {
		return g.Err() != nil || g.lease.Until().After(since.Add(g.lease.Length()))
	}, "a heartbeat of generation %d sent after %v answered", g.ID, since.Format("15:04:05.000"))
}

// TestStaticMemberFenced: when a second process joins with a
// group.instance.id in use, the coordinator fences the first: its
// generation ends with an ErrFatal error (FENCED_INSTANCE_ID) and Join
// refuses to go on.
func TestStaticMemberFenced(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := createTopic(t, c, "kg-fenced", 2)
	group := testcluster.UniqueName("kg-fenced")
	cfg := testConfig(c, group, topic)
	cfg.InstanceID = "the-instance"
	first := startRunner(t, cfg)
	testwait.WaitFor(t, 30*time.Second, func() bool { return first.live() != nil }, "the first instance to join")
	g := first.live()

	second := startRunner(t, cfg)
	testwait.WaitFor(t, 30*time.Second, func() bool { return second.live() != nil }, "the second instance to join")
	testwait.WaitFor(t, 30*time.Second, func() bool { return g.Err() != nil }, "the first instance to be fenced")
	require.ErrorIs(t, g.Err(), ErrFatal)
	require.ErrorIs(t, g.Err(), sarama.ErrFencedInstancedId)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := first.m.Join(ctx)
	if !errors.Is(err, ErrJoinInProgress) { // the runner may be rejoining right now
		require.ErrorIs(t, err, ErrFatal)
	}
	testwait.WaitFor(t, 10*time.Second, func() bool {
		select {
		case <-first.done:
			return true
		default:
			return false
		}
	}, "the first runner to give up")
}

// TestStaticReplacementLeasesNeverOverlap: a second process with the same
// group.instance.id takes the instance over at once (the coordinator
// replaces the member without waiting for its session to time out), while
// the first learns it was fenced only at its next heartbeat. The second's
// lease must not hold before the first's has ended: sampled every
// millisecond, the first's lease is never held once the second's is, on
// Kafka 3.9 (ZooKeeper mode) and Kafka 4.x (KRaft).
func TestStaticReplacementLeasesNeverOverlap(t *testing.T) {
	t.Parallel()
	for name, cluster := range map[string]func(testing.TB) *testcluster.Cluster{
		"kafka3.9": testcluster.Shared, "kraft4": testcluster.SharedKRaft,
	} {
		t.Run(name, func(t *testing.T) {
			c := cluster(t)
			topic := createTopic(t, c, "kg-replace", 2)
			cfg := testConfig(c, testcluster.UniqueName("kg-replace"), topic)
			cfg.InstanceID = "the-instance"
			cfg.HeartbeatInterval = 2 * time.Second // the gap in which the first does not know yet
			first := startRunner(t, cfg)
			testwait.WaitFor(t, 30*time.Second, func() bool {
				g := first.live()
				return g != nil && g.LeaseHeld()
			}, "the first instance to hold its lease")
			g1 := first.live()

			var lastFirst, firstSecond time.Time
			var g2 *Generation
			stop := make(chan struct{})
			sampled := make(chan struct{})
			second := startRunner(t, cfg)
			sample := func() {
				now := time.Now()
				if g1.LeaseHeld() {
					lastFirst = now
				}
				if g2 == nil {
					g2 = second.live()
				}
				if g2 != nil && g2.LeaseHeld() && firstSecond.IsZero() {
					firstSecond = now
				}
			}
			go func() {
				defer close(sampled)
				for {
					select {
					case <-stop:
						// Once more: on a loaded machine this goroutine
						// may not have run since the second's lease
						// started to hold.
						sample()
						return
					case <-time.After(time.Millisecond):
					}
					sample()
				}
			}()
			testwait.WaitFor(t, 30*time.Second, func() bool { return g1.Err() != nil }, "the first instance to be fenced")
			require.ErrorIs(t, g1.Err(), sarama.ErrFencedInstancedId)
			testwait.WaitFor(t, 30*time.Second, func() bool {
				g := second.live()
				return g != nil && g.LeaseHeld()
			}, "the second instance to hold its lease")
			close(stop)
			<-sampled
			require.False(t, lastFirst.IsZero())
			require.False(t, firstSecond.IsZero())
			t.Logf("the first's lease last held %v before the second's first held (second's hold until %v)",
				firstSecond.Sub(lastFirst).Round(time.Millisecond), g2.HoldUntil.Format("15:04:05.000"))
			require.True(t, lastFirst.Before(firstSecond),
				"both instances held the lease for %v", lastFirst.Sub(firstSecond).Round(time.Millisecond))
		})
	}
}

// TestStaticLeaderRestartStillFollowsPartitions: when the static member
// that leads the group restarts, the coordinator lets it back in without a
// rebalance. At JoinGroup v9 it comes back as the leader told to skip the
// assignment (KIP-814); below v9 (brokers before Kafka 3.2, forced here
// with noJoinV9) as a follower, so that no member computed the group's
// assignment from its own metadata any more. Every member watches its own
// subscription too: either way the partitions added afterwards are
// noticed and assigned, on Kafka 3.9 and Kafka 4.x. (Before, only the
// leader watched, and below v9 they were not.)
func TestStaticLeaderRestartStillFollowsPartitions(t *testing.T) {
	t.Parallel()
	for name, cluster := range map[string]func(testing.TB) *testcluster.Cluster{
		"kafka3.9": testcluster.Shared, "kraft4": testcluster.SharedKRaft,
	} {
		for _, v9 := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/joinv9=%v", name, v9), func(t *testing.T) {
				c := cluster(t)
				topic := createTopic(t, c, "kg-static-grow", 2)
				group := testcluster.UniqueName("kg-static-grow")
				cfgA := testConfig(c, group, topic)
				cfgA.InstanceID = "instance-a"
				cfgA.SessionTimeout = 20 * time.Second
				cfgA.MetadataMaxAge = 500 * time.Millisecond
				cfgA.noJoinV9 = !v9
				cfgB := cfgA
				cfgB.InstanceID = "instance-b"
				a := startRunner(t, cfgA)
				testwait.WaitFor(t, 30*time.Second, func() bool { return a.live() != nil }, "the first member to lead")
				require.True(t, a.live().Leader)
				require.NotNil(t, a.live().GroupAssignment, "the leader knows the group's assignment")
				b := startRunner(t, cfgB)
				want := map[string]int32{topic: 2}
				testwait.WaitFor(t, 30*time.Second, func() bool { return settled(want, a, b) }, "two static members sharing the topic")
				require.True(t, a.live().Leader)
				require.False(t, b.live().Leader)
				require.Nil(t, b.live().GroupAssignment, "a follower knows its own share only")
				require.Len(t, a.live().GroupAssignment, 2)

				a.stop() // no LeaveGroup for a static member
				a2 := startRunner(t, cfgA)
				testwait.WaitFor(t, 30*time.Second, func() bool { return settled(want, a2, b) }, "the restarted member back in the group")
				g := a2.live()
				if v9 {
					require.True(t, g.Leader, "the restarted leader came back as the leader")
					require.True(t, g.SkippedAssignment, "the coordinator kept the assignment")
					require.Nil(t, g.GroupAssignment)
				} else {
					require.False(t, g.Leader, "the restarted leader came back as a follower")
				}

				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				require.NoError(t, c.AddPartitions(ctx, topic, 4))
				testwait.WaitFor(t, 30*time.Second, func() bool {
					return settled(map[string]int32{topic: 4}, a2, b)
				}, "the four partitions assigned")
			})
		}
	}
}

// TestStaticLeaderRestartWatchesForJavaFollower: a group of a static
// zkconsumer member, which leads, and Kafka 3.9's Java console consumer,
// which follows; each subscribes to a topic of its own. The leader
// restarts within its session: the coordinator lets it back in without a
// rebalance, as the leader told to skip the assignment (JoinGroup v9,
// KIP-814). Then partitions are added to the Java consumer's topic. Java's
// followers do not watch partition counts, and the restarted member does
// not subscribe to that topic: only as the group's leader does it watch
// it. It notices, the group rebalances once (no other generation comes
// between), and the Java consumer gets the new partitions and prints their
// records. Below v9 the restarted member came back as a follower and the
// new partitions were never assigned (KAFKAGROUP_NO_JOIN_V9=1 makes the
// member send JoinGroup v5: the test then fails).
func TestStaticLeaderRestartWatchesForJavaFollower(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	mine := createTopic(t, c, "kg-skip-mine", 2)
	theirs := createTopic(t, c, "kg-skip-java", 2)
	group := testcluster.UniqueName("kg-skip")
	cfgA := testConfig(c, group, mine)
	cfgA.ClientID = "a-zkconsumer" // sorts before Java's member id: not that it matters with disjoint topics
	cfgA.InstanceID = "instance-a"
	cfgA.SessionTimeout = 30 * time.Second
	cfgA.MetadataMaxAge = 500 * time.Millisecond
	cfgA.noJoinV9 = os.Getenv("KAFKAGROUP_NO_JOIN_V9") != "" // to see this test fail without KIP-814
	a := startRunner(t, cfgA)
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(map[string]int32{mine: 2}, a) }, "the zkconsumer member to lead")
	require.True(t, a.live().Leader)

	java := startJavaConsumer(t, c, theirs, group)
	var javaID string
	testwait.WaitFor(t, 90*time.Second, func() bool {
		g := a.live()
		if g == nil {
			return false
		}
		state, desc := describe(t, c, group)
		if state != "Stable" || len(desc) != 2 || !slices.Equal(desc[g.MemberID][mine], []int32{0, 1}) {
			return false
		}
		for id := range desc {
			if id != g.MemberID {
				javaID = id
			}
		}
		return slices.Equal(desc[javaID][theirs], []int32{0, 1})
	}, "a stable group of both, each on its topic")
	g1 := a.live()
	require.True(t, g1.Leader)

	a.stop() // a static member sends no LeaveGroup
	a2 := startRunner(t, cfgA)
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(map[string]int32{mine: 2}, a2) }, "the restarted member back in the group")
	g2 := a2.live()
	require.Equal(t, g1.ID, g2.ID, "the restart started no new generation")
	_, desc := describe(t, c, group)
	require.Equal(t, []int32{0, 1}, desc[javaID][theirs], "the Java consumer kept its partitions")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, c.AddPartitions(ctx, theirs, 4))
	testwait.WaitFor(t, 60*time.Second, func() bool {
		state, desc := describe(t, c, group)
		return state == "Stable" && slices.Equal(desc[javaID][theirs], []int32{0, 1, 2, 3})
	}, "the new partitions assigned to the Java consumer")
	require.True(t, g2.Leader, "the restarted member leads")
	require.True(t, g2.SkippedAssignment, "the coordinator kept the group's assignment")
	// The coordinator may answer the Java consumer's SyncGroup a moment
	// before the leader's Join returns.
	testwait.WaitFor(t, 30*time.Second, func() bool {
		g := a2.live()
		return g != nil && g.ID != g1.ID
	}, "the leader in the new generation")
	g3 := a2.live()
	require.Equal(t, g1.ID+1, g3.ID, "one rebalance, for the new partitions")
	require.True(t, g3.Leader)
	require.False(t, g3.SkippedAssignment, "the leader assigned the grown topic")

	produced, err := c.Produce(ctx, theirs, 40, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)
	require.NotEmpty(t, produced.Offsets[2])
	require.NotEmpty(t, produced.Offsets[3])
	testwait.WaitFor(t, 60*time.Second, func() bool {
		seen := map[int32]int{}
		for _, r := range java.records(t) {
			seen[r.Partition]++
		}
		for p, offs := range produced.Offsets {
			if seen[p] < len(offs) {
				return false
			}
		}
		return true
	}, "the Java consumer to print the records of every partition")
	t.Logf("generations: %d before and after the restart, %d after the growth; the Java consumer printed %d records",
		g1.ID, g3.ID, len(java.records(t)))
	require.Same(t, g3, a2.live(), "no other rebalance")
}
