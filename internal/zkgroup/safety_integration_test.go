package zkgroup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestExpiryEndsOnlyTheExpiredGeneration expires a member's session three
// times. Expiry reaches the member twice (the session event and every lost
// watch); whichever comes first, the generation of the expired session
// must end exactly once and as lost, and the generation claimed in the new
// session must not be revoked by the late second signal.
func TestExpiryEndsOnlyTheExpiredGeneration(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 4)
	topics := map[string]int{topic: 1}
	group := testcluster.UniqueName("g-expire2")
	m := startMember(t, c, group, group+"_m", memberOpts{topics: topics})
	waitConverged(t, observer, group, topics, strategyname.Range, 1, m)

	for round := 1; round <= 3; round++ {
		old := m.session.ID()
		require.NoError(t, m.tap.Expire())
		require.True(t, testwait.Until(30*time.Second, func() bool {
			gen := m.Generation()
			return gen != nil && gen.SessionID != old && gen.SessionID == m.session.ID()
		}), "round %d: no generation in the new session", round)
		waitConverged(t, observer, group, topics, strategyname.Range, 1, m)
		time.Sleep(500 * time.Millisecond) // room for a late second signal
		m.rec.mu.Lock()
		ended, gens := append([]revoked(nil), m.rec.ended...), m.rec.gens
		m.rec.mu.Unlock()
		require.Len(t, ended, round, "round %d: generations ended: %+v", round, ended)
		require.Equal(t, round+1, gens, "round %d: a fresh generation was revoked and claimed again", round)
		last := ended[len(ended)-1]
		require.Equal(t, old, last.session)
		require.True(t, last.lost, "round %d: the expired generation ended orderly: %+v", round, last)
		require.Equal(t, m.session.ID(), m.Generation().SessionID)
	}
}

// TestRoundRobinMembersWithDifferentTopicsFollowGrowth: under roundrobin a
// new partition of any topic moves partitions of every topic, so a member
// that does not consume the grown topic must rebalance too; otherwise it
// keeps owner nodes the others are assigned and they conflict forever.
func TestRoundRobinMembersWithDifferentTopicsFollowGrowth(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	group := testcluster.UniqueName("g-rr-grow")
	idA, idB := group+"_a", group+"_b"
	rr, err := zkassign.NewAssignor(strategyname.RoundRobin)
	require.NoError(t, err)
	parts := func(n int32) []int32 {
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(i)
		}
		return out
	}
	// a's share of t1 when t2 has n partitions: a consumes t1 with one
	// stream, b both topics with two.
	share := func(t1, t2 string, n int32) map[zkutil.TopicPartition]zkutil.ConsumerThreadID {
		ta := zkutil.ConsumerThreadID{ConsumerID: idA}
		tb0, tb1 := zkutil.ConsumerThreadID{ConsumerID: idB}, zkutil.ConsumerThreadID{ConsumerID: idB, Thread: 1}
		got, err := rr.Assign(zkassign.AssignmentContext{
			ConsumerID:         idA,
			MyTopicThreadIDs:   map[string][]zkutil.ConsumerThreadID{t1: {ta}},
			ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{t1: {ta, tb0, tb1}, t2: {tb0, tb1}},
			PartitionsForTopic: map[string][]int32{t1: parts(4), t2: parts(n)},
			Consumers:          []string{idA, idB},
		})
		require.NoError(t, err)
		return got[idA]
	}
	// Pick topic names and a growth of t2 that move a's share of t1
	// (the partitions' hashes depend on the names).
	t1 := testcluster.UniqueName("rr")
	var t2 string
	var grown int32
	for i := 0; i < 200 && grown == 0; i++ {
		cand := fmt.Sprintf("x%d-%s", i, t1)
		for n := int32(3); n <= 12; n++ {
			if !maps.Equal(share(t1, cand, 2), share(t1, cand, n)) {
				t2, grown = cand, n
				break
			}
		}
	}
	require.NotZero(t, grown, "no topic name and growth move a partition of a")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, c.CreateTopic(ctx, t1, 4, 1))
	require.NoError(t, c.CreateTopic(ctx, t2, 2, 1))

	both := map[string]int{t1: 2, t2: 2}
	b := startMember(t, c, group, idB, memberOpts{topics: both, strategy: strategyname.RoundRobin})
	a := startMember(t, c, group, idA, memberOpts{topics: map[string]int{t1: 1}, strategy: strategyname.RoundRobin})
	waitConverged(t, observer, group, both, strategyname.RoundRobin, 2, b, a)

	require.NoError(t, c.AddPartitions(ctx, t2, grown))
	owners := waitConverged(t, observer, group, both, strategyname.RoundRobin, 2, b, a)
	require.Len(t, owners, 4+int(grown))
}

// TestConflictingClaimsDoNotPileUpWatches keeps a partition's owner node
// held by a stranger while a member tries to claim it again and again: each
// attempt used to leave an exists-watch, and its goroutine, behind.
func TestConflictingClaimsDoNotPileUpWatches(t *testing.T) {
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 1)
	group := testcluster.UniqueName("g-squat")
	ctx := context.Background()
	squatter := zkutil.OwnerPath(group, topic, 0)
	require.NoError(t, observer.CreateEphemeral(ctx, squatter, []byte("stranger-0")))

	s, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 4 * time.Second, ConnectionTimeout: 20 * time.Second})
	require.NoError(t, err)
	defer s.Close()
	a, err := zkassign.NewAssignor(strategyname.Range)
	require.NoError(t, err)
	rec := &recorder{}
	m, err := NewMember(Session(s), MemberConfig{Group: group, ConsumerID: group + "_m", Subscription: StaticSubscription(map[string]int{topic: 1}),
		Assignor: a, MaxRetries: 1000, Backoff: 20 * time.Millisecond, SessionTimeout: 4 * time.Second, Handler: rec})
	require.NoError(t, err)
	started := make(chan error, 1)
	go func() { started <- m.Start(ctx) }()
	// The fewest goroutines seen over a second, before and after two more
	// seconds of conflicts (about a hundred failed attempts unloaded): a
	// leak stays, while goroutines that come and go (the session's
	// requests, the runtime's) are not counted at whatever moment a busy
	// machine happens to sample them.
	fewest := func() int {
		n := runtime.NumGoroutine()
		for range 20 {
			time.Sleep(50 * time.Millisecond)
			n = min(n, runtime.NumGoroutine())
		}
		return n
	}
	time.Sleep(300 * time.Millisecond)
	before := fewest()
	time.Sleep(2 * time.Second)
	after := fewest()
	require.Less(t, after-before, 5, "goroutines grew from %d to %d while claims conflicted", before, after)

	require.NoError(t, observer.Delete(ctx, squatter, -1))
	select {
	case err := <-started:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the member never claimed the released partition")
	}
	require.NotNil(t, m.Generation())
	require.Len(t, m.Generation().Owned, 1)
	require.NoError(t, m.Close(ctx))
}

// TestCloseRacingStart closes members while they start: Close must wait
// for Start, Start must not register or claim after Close, and nothing may
// be left in ZooKeeper (run with -race: Close used to race on Start's
// cancel function).
func TestCloseRacingStart(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 2)
	group := testcluster.UniqueName("g-race")
	ctx := context.Background()
	s, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 4 * time.Second, ConnectionTimeout: 20 * time.Second})
	require.NoError(t, err)
	defer s.Close()
	a, err := zkassign.NewAssignor(strategyname.Range)
	require.NoError(t, err)
	for i, delay := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond} {
		id := group + "_m" + string(rune('a'+i))
		m, err := NewMember(Session(s), MemberConfig{Group: group, ConsumerID: id, Subscription: StaticSubscription(map[string]int{topic: 1}),
			Assignor: a, MaxRetries: 3, Backoff: 100 * time.Millisecond, SessionTimeout: 4 * time.Second, Handler: &recorder{}})
		require.NoError(t, err)
		started := make(chan error, 1)
		go func() { started <- m.Start(ctx) }()
		time.Sleep(delay)
		require.NoError(t, m.Close(ctx))
		err = <-started
		require.True(t, err == nil || errors.Is(err, ErrMemberClosed), "Start: %v", err)
		// The observer may be served by another server of the ensemble,
		// one that has not applied Close's deletes yet: it syncs first.
		require.NoError(t, observer.Sync(ctx, zkutil.ConsumersPath))
		ok, _, err := observer.Exists(ctx, zkutil.ConsumerIDPath(group, id))
		require.NoError(t, err)
		require.False(t, ok, "delay %v: the registration outlived Close", delay)
		owners, err := ownersOf(ctx, observer, group, []string{topic})
		require.NoError(t, err)
		require.Empty(t, owners, "delay %v: owner nodes outlived Close", delay)
		require.ErrorIs(t, m.Start(ctx), ErrMemberClosed)
	}
}

// TestDeletedRegistrationIsMadeAgain: an operator deletes a live member's
// node under /ids. The member sees the membership change and registers
// again instead of staying invisible to the rest of the group.
func TestDeletedRegistrationIsMadeAgain(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 2)
	topics := map[string]int{topic: 1}
	group := testcluster.UniqueName("g-reg")
	m := startMember(t, c, group, group+"_m", memberOpts{topics: topics})
	waitConverged(t, observer, group, topics, strategyname.Range, 1, m)
	ctx := context.Background()
	path := zkutil.ConsumerIDPath(group, m.id)
	require.NoError(t, observer.Delete(ctx, path, -1))
	require.True(t, testwait.Until(30*time.Second, func() bool {
		ok, st, err := observer.Exists(ctx, path)
		return err == nil && ok && st.EphemeralOwner == m.session.ID()
	}), "the member did not register again")
	waitConverged(t, observer, group, topics, strategyname.Range, 1, m)
}

// TestDeletedTopicsAreReportedAndNotWatched: a static member reports a
// subscribed topic that is deleted; a wildcard member stops watching the
// topics it matched once they are deleted (it used to keep an exists-watch,
// and its goroutine, per vanished topic).
func TestDeletedTopicsAreReportedAndNotWatched(t *testing.T) {
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prefix := testcluster.UniqueName("gone")
	filter, err := topicfilter.New(zkutil.PatternWhitelist, prefix+"-.*")
	require.NoError(t, err)
	group := testcluster.UniqueName("g-gone")
	static := prefix + "-static"
	require.NoError(t, c.CreateTopic(ctx, static, 1, 1))
	sm := startMember(t, c, group+"-s", group+"-s_m", memberOpts{topics: map[string]int{static: 1}})
	wm := startMember(t, c, group, group+"_w", memberOpts{filter: filter, streams: 1})
	require.True(t, testwait.Until(30*time.Second, func() bool { return len(wm.rec.snapshot()) == 1 }))
	time.Sleep(time.Second)
	before := runtime.NumGoroutine()

	var topics []string
	for i := range 8 {
		topic := fmt.Sprintf("%s-%d", prefix, i)
		require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
		topics = append(topics, topic)
	}
	require.True(t, testwait.Until(60*time.Second, func() bool { return len(wm.rec.snapshot()) == 9 }), "the wildcard member picks up the new topics")
	for _, topic := range append(topics, static) {
		require.NoError(t, c.DeleteTopic(ctx, topic))
	}
	require.True(t, testwait.Until(60*time.Second, func() bool { return len(wm.rec.snapshot()) == 0 }), "the wildcard member drops the deleted topics")
	time.Sleep(2 * time.Second)
	after := runtime.NumGoroutine()
	require.Less(t, after-before, 4, "goroutines grew from %d to %d after 9 topics came and went", before, after)

	require.True(t, testwait.Until(30*time.Second, func() bool {
		for {
			select {
			case err := <-sm.errs:
				if errors.Is(err, ErrTopicMissing) {
					return true
				}
			default:
				return false
			}
		}
	}), "the deleted topic of the static member was not reported")
}

// TestKeptPartitionsKeepTheirOwnerNodes: when the youngest of three members
// leaves, the others keep some of their partitions (range: 0-1 and 3 of
// 0-5). Their owner nodes must not be deleted and created again, so that a
// rebalance writes to ZooKeeper only for the partitions that move; the
// moved ones are owned by their new member.
func TestKeptPartitionsKeepTheirOwnerNodes(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 6)
	topics := map[string]int{topic: 1}
	group := testcluster.UniqueName("g-keep")
	m0 := startMember(t, c, group, group+"_m0", memberOpts{topics: topics})
	m1 := startMember(t, c, group, group+"_m1", memberOpts{topics: topics})
	m2 := startMember(t, c, group, group+"_m2", memberOpts{topics: topics})
	waitConverged(t, observer, group, topics, strategyname.Range, 3, m0, m1, m2)
	czxid := func(p int32) int64 {
		_, stat, err := observer.Get(context.Background(), zkutil.OwnerPath(group, topic, p))
		require.NoError(t, err)
		return stat.Czxid
	}
	before := map[int32]int64{}
	for p := range int32(6) {
		before[p] = czxid(p)
	}
	m2.stop(t)
	owners := waitConverged(t, observer, group, topics, strategyname.Range, 2, m0, m1)
	for p := range int32(6) {
		owner := owners[zkutil.TopicPartition{Topic: topic, Partition: p}]
		switch p {
		case 0, 1, 3: // kept by the same thread
			require.Equal(t, before[p], czxid(p), "partition %d stayed with %s, yet its owner node was created again", p, owner)
		default:
			require.NotEqual(t, before[p], czxid(p), "partition %d moved to %s", p, owner)
		}
	}
	require.Equal(t, m0.id+"-0", owners[zkutil.TopicPartition{Topic: topic, Partition: 2}])
}

// TestExpiryBetweenAttemptsKeepsWatching: a member's session expires while
// its rebalance attempts fail (a stranger holds an owner node it is
// assigned), so that a later attempt of the same rebalance registers it in
// the new session and succeeds. The member must then watch the group in
// that session: when a second member joins, it must rebalance. (It used to
// arm only the topics' watches there, not the membership's, and sat on
// partitions assigned to the newcomer until the end of the chaos run.)
func TestExpiryBetweenAttemptsKeepsWatching(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 4)
	topics := map[string]int{topic: 1}
	group := testcluster.UniqueName("g-expire-mid")
	ctx := context.Background()
	squatter := zkutil.OwnerPath(group, topic, 0)
	require.NoError(t, observer.CreateEphemeral(ctx, squatter, []byte("stranger-0")))

	tap := &testcluster.SessionTap{}
	s, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 4 * time.Second,
		ConnectionTimeout: 20 * time.Second, Dialer: tap.Dial})
	require.NoError(t, err)
	a, err := zkassign.NewAssignor(strategyname.Range)
	require.NoError(t, err)
	id := group + "_a"
	tm := &testMember{id: id, session: s, rec: &recorder{}, tap: tap, errs: make(chan error, 100)}
	m, err := NewMember(Session(s), MemberConfig{Group: group, ConsumerID: id, Subscription: StaticSubscription(topics),
		Assignor: a, MaxRetries: 1000, Backoff: 100 * time.Millisecond, SessionTimeout: 4 * time.Second,
		Handler: tm.rec, Logger: testLogger()})
	require.NoError(t, err)
	tm.Member = m
	t.Cleanup(func() { tm.stop(t) })
	started := make(chan error, 1)
	go func() { started <- m.Start(ctx) }()

	// Registered and failing against the stranger's node: expire it.
	idPath := zkutil.ConsumerIDPath(group, id)
	first := s.ID()
	require.True(t, testwait.Until(30*time.Second, func() bool {
		ok, st, err := observer.Exists(ctx, idPath)
		return err == nil && ok && st.EphemeralOwner == first
	}), "the member did not register")
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, tap.Expire())
	// The same rebalance registers it again in the next session ...
	require.True(t, testwait.Until(30*time.Second, func() bool {
		ok, st, err := observer.Exists(ctx, idPath)
		return err == nil && ok && st.EphemeralOwner != first && st.EphemeralOwner == s.ID()
	}), "the member did not register in its new session")
	// ... and succeeds once the stranger leaves. (On a loaded machine an
	// attempt can fall between the two sessions: the rebalance then ends,
	// Start returns, and the member's background loop registers it in the
	// new session instead. The newcomer below must be handed its share
	// either way.)
	inFirst := true
	select {
	case err := <-started:
		require.NoError(t, err)
		inFirst = false
		t.Log("the first rebalance ended between the sessions; the background loop took over")
	default:
	}
	require.NoError(t, observer.Delete(ctx, squatter, -1))
	if inFirst {
		select {
		case err := <-started:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("the member never claimed the released partition")
		}
	}
	waitConverged(t, observer, group, topics, strategyname.Range, 1, tm)

	// A newcomer joins: the first member must hand it its share.
	b := startMember(t, c, group, group+"_b", memberOpts{topics: topics})
	waitConverged(t, observer, group, topics, strategyname.Range, 2, tm, b)
}
