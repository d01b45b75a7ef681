package kafkagroup

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/kip848"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestHeartbeatInFlightDuringRevocationDoesNotRenew: the coordinator asked
// the member to give up a-1; a periodic heartbeat still reporting a-1 is
// in flight when the member acknowledges (Acknowledge drops a-1 from what
// it owns). The coordinator handled that heartbeat with the revocation
// pending, and its rebalance timer runs from the revocation: the answer
// must not renew the lease, else the lease could outlast the coordinator's
// fencing of a member whose acknowledgement is late. The acknowledging
// heartbeat, which reports a-0 alone, renews it.
func TestHeartbeatInFlightDuringRevocationDoesNotRenew(t *testing.T) {
	cfg := consumerConfig()
	cfg.SessionTimeout, cfg.RebalanceTimeout = 2*time.Second, 2*time.Second // a lease of 1.5 s
	m, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	m.consumer.names[idA], m.consumer.ids["a"] = "a", idA
	f := connectFake(t, m)

	m.consumer.memberID, m.consumer.epoch = "m1", 5
	m.consumer.owned = map[string][]int32{"a": {0, 1}}
	m.consumer.target = []kip848.TopicPartitions{{TopicID: idA, Partitions: []int32{0}}} // a-1 is being revoked
	renewed := time.Now().Add(-time.Second)                                              // the last renewal: the lease ends in 0.5 s
	gen := newGeneration(5, "m1", "", false, map[string][]int32{"a": {0, 1}}, m.consumer.leaseTermLocked(), renewed, time.Time{}, nil)
	m.gen = gen
	lapse := renewed.Add(1500 * time.Millisecond)
	ctx := context.Background()
	ok := func(epoch int32) *kip848.HeartbeatResponse {
		return &kip848.HeartbeatResponse{MemberID: &m.consumer.memberID, MemberEpoch: epoch, HeartbeatIntervalMs: 5000}
	}

	// The periodic heartbeat, in flight while the member acknowledges.
	wait := make(chan time.Duration, 1)
	lastOK := time.Now()
	go func() { wait <- consumerBeat(m, ctx, gen, &lastOK) }()
	req := <-f.reqs
	require.Equal(t, []kip848.TopicPartitions{{TopicID: idA, Partitions: []int32{0, 1}}}, req.TopicPartitions, "the heartbeat reports a-1")
	m.Acknowledge(gen, map[string][]int32{"a": {0}})
	f.answers <- ok(5)
	require.Equal(t, 500*time.Millisecond, <-wait, "the broker's 5 s interval, shortened to a third of the 1.5 s lease")
	time.Sleep(time.Until(lapse.Add(50 * time.Millisecond)))
	require.False(t, gen.LeaseHeld(), "a heartbeat handled with a revocation pending renewed the lease")

	// The acknowledgement: the coordinator hears the member owns a-0 alone.
	go func() { wait <- consumerBeat(m, ctx, gen, &lastOK) }()
	req = <-f.reqs
	require.Equal(t, []kip848.TopicPartitions{{TopicID: idA, Partitions: []int32{0}}}, req.TopicPartitions)
	f.answers <- ok(6)
	<-wait
	require.True(t, gen.LeaseHeld(), "the acknowledging heartbeat renews the lease")
}

// TestConsumerHeartbeatsDoNotWaitBehindACommit: a broker answers one connection's
// requests in order, and a commit may wait seconds for the offsets
// topic's replicas. While a commit is unanswered, heartbeats go out and
// are answered on a connection of their own, and renew the lease.
func TestConsumerHeartbeatsDoNotWaitBehindACommit(t *testing.T) {
	m := consumerMember(t)
	f := connectFake(t, m)
	m.consumer.memberID, m.consumer.epoch = "m1", 3
	m.consumer.owned = map[string][]int32{"a": {0}}
	gen := newGeneration(3, "m1", "", false, map[string][]int32{"a": {0}}, m.consumer.leaseTermLocked(), time.Now().Add(-time.Hour), time.Time{}, nil)
	m.gen = gen
	require.False(t, gen.LeaseHeld())

	ctx, cancel := context.WithCancel(context.Background())
	committed := make(chan error, 1)
	go func() {
		committed <- m.Commit(ctx, gen, map[zkutil.TopicPartition]int64{{Topic: "a", Partition: 0}: 9})
	}()
	<-f.commits // the commit is at the coordinator, unanswered

	wait := make(chan time.Duration, 1)
	lastOK := time.Now()
	go func() { wait <- consumerBeat(m, ctx, gen, &lastOK) }()
	select {
	case req := <-f.reqs:
		require.Equal(t, int32(3), req.MemberEpoch)
	case <-time.After(5 * time.Second):
		t.Fatal("the heartbeat waited behind the unanswered commit")
	}
	f.answers <- &kip848.HeartbeatResponse{MemberID: &m.consumer.memberID, MemberEpoch: 3, HeartbeatIntervalMs: 1000}
	<-wait
	require.True(t, gen.LeaseHeld(), "the heartbeat renewed the lease")
	cancel()
	require.Error(t, <-committed)
}

// TestHeartbeatAnsweredAfterTheSessionIsNotApplied: a network partition
// holds a heartbeat's answer back and delivers it at the heal, after the
// session timeout: by then the coordinator has fenced the member and
// handed its partitions on. The member must not act on the late answer (a
// new epoch, a revocation it would hand over as if it still held the
// partitions): the heartbeat fails at the end of the session, and the
// member's state is left as it was. The chaos suite found a member that
// applied such an answer and released a partition as its own 2.5 s after
// another member had started on it.
func TestHeartbeatAnsweredAfterTheSessionIsNotApplied(t *testing.T) {
	m := consumerMember(t)
	f := connectFake(t, m)
	m.consumer.sessionTimeout = time.Second
	m.consumer.memberID, m.consumer.epoch = "m1", 7
	m.consumer.owned = map[string][]int32{"a": {0, 1}}
	gen := newGeneration(7, "m1", "", false, map[string][]int32{"a": {0, 1}}, m.consumer.leaseTermLocked(), time.Now(), time.Time{}, nil)
	m.gen = gen

	lastOK := time.Now()
	wait := make(chan time.Duration, 1)
	go func() { wait <- consumerBeat(m, context.Background(), gen, &lastOK) }()
	<-f.reqs
	held := time.Now()
	select {
	case <-wait:
	case <-time.After(5 * time.Second):
		t.Fatal("the heartbeat waited past the session for its answer")
	}
	require.Less(t, time.Since(held), 2*time.Second, "the heartbeat ended at the end of the session")
	// The late answer, with a new epoch and a revocation, finds no one.
	select {
	case f.answers <- &kip848.HeartbeatResponse{MemberID: &m.consumer.memberID, MemberEpoch: 8, HeartbeatIntervalMs: 1000,
		Assignment: []kip848.TopicPartitions{{TopicID: idA, Partitions: []int32{0}}}}:
	case <-time.After(100 * time.Millisecond):
	}
	require.NotEqual(t, int32(8), m.Epoch(), "the late answer was not applied")
	require.Nil(t, m.consumer.target, "no revocation came from the late answer")
	require.ErrorIs(t, gen.Err(), ErrMembershipLost, "the session passed without an answer")
}

// consumerBeat runs one heartbeat of gen as the heartbeat goroutine does,
// with lastOK the last answered one, and returns the wait before the next
// (-1: the heartbeats stop).
func consumerBeat(m *Member, ctx context.Context, gen *Generation, lastOK *time.Time) time.Duration {
	st := m.newBeatState(*lastOK)
	wait, more := m.heartbeatOnce(ctx, gen, st)
	*lastOK = st.lastOK
	if !more {
		return -1
	}
	return wait
}
