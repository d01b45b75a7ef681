package zkgroup

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// awaitMember is a Member with just what awaitReleased and backoff use.
func awaitMember(z *ownerZK, group string, backoff time.Duration) *Member {
	return &Member{zk: z, cfg: MemberConfig{Group: group, Backoff: backoff}, conflicts: map[string]conflictWatch{}, known: ownedNodes{}}
}

// TestAwaitReleasedWaitsForThePreviousOwner: a partition still owned by
// its previous owner is waited for, without a write, until that owner
// deletes its node; the claim that follows then meets no conflict.
// Partitions kept from the previous generation are not waited for.
func TestAwaitReleasedWaitsForThePreviousOwner(t *testing.T) {
	const group, topic = "g", "t"
	tp := func(p int32) zkutil.TopicPartition { return zkutil.TopicPartition{Topic: topic, Partition: p} }
	path := func(p int32) string { return zkutil.OwnerPath(group, topic, p) }
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{
		path(0): {data: me.String(), owner: 1},  // held: ours
		path(1): {data: "previous-0", owner: 2}, // being released
		path(2): {data: me.String(), owner: 1},  // ours already (a lost reply)
	}}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{tp(0): me, tp(1): me, tp(2): me, tp(3): me}
	held := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{tp(0): me}
	m := awaitMember(z, group, time.Minute)

	done := make(chan error, 1)
	go func() { done <- m.awaitReleased(context.Background(), 1, mine, held) }()
	require.Eventually(t, func() bool { return z.watching(path(1)) == 1 }, 5*time.Second, time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("returned while the previous owner still held its node: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	require.Zero(t, z.creates, "waiting writes nothing")
	require.NoError(t, z.Delete(context.Background(), path(1), 0)) // the previous owner releases
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting after the node was deleted")
	}
	_, err := claim(context.Background(), z.Bind(1), group, mine, held, nil, time.Second)
	require.NoError(t, err)
	require.Equal(t, 3, z.creates, "partitions 1, 2 and 3 created (2 found ours), 0 kept")
	require.Equal(t, ownerNode{data: me.String(), owner: 1}, z.nodes[path(1)])
}

// TestAwaitReleasedGivesUpAfterTheBackoff: a node that stays another's is
// reported as a conflict once the backoff has passed, and the member's
// backoff after it does not wait a second time; the pending watch is
// reused by the next wait on the same node instead of a new one.
func TestAwaitReleasedGivesUpAfterTheBackoff(t *testing.T) {
	const group, topic = "g", "t"
	p1 := zkutil.OwnerPath(group, topic, 1)
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{p1: {data: "stuck-0", owner: 2}}}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{{Topic: topic, Partition: 0}: me, {Topic: topic, Partition: 1}: me}
	m := awaitMember(z, group, 50*time.Millisecond)

	err := m.awaitReleased(context.Background(), 1, mine, nil)
	var conflict *ConflictError
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, p1, conflict.Path)
	require.Equal(t, "stuck-0", conflict.Owner)
	require.True(t, conflict.waited)
	require.Zero(t, z.creates)

	m.cfg.Backoff = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m.backoff(ctx, err)
	require.NoError(t, ctx.Err(), "the backoff waited again for a conflict already waited for")

	// A conflict found by claim itself (a lost race) is waited for.
	m.cfg.Backoff = 50 * time.Millisecond
	m.backoff(ctx, &ConflictError{Path: p1})
	require.Equal(t, 1, z.watching(p1), "one watch on the node, however often it is waited for")
}

// TestAwaitReleasedReadsEachNodeOnce: waiting for many nodes that their
// owner releases one by one costs one read (with a watch) per node, not a
// read of every pending node after each deletion; the wait ends with the
// last deletion and not before.
func TestAwaitReleasedReadsEachNodeOnce(t *testing.T) {
	const group, topic, n = "g", "t", 300
	path := func(p int32) string { return zkutil.OwnerPath(group, topic, p) }
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{}}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for p := range int32(n) {
		z.nodes[path(p)] = ownerNode{data: "previous-0", owner: 2}
		mine[zkutil.TopicPartition{Topic: topic, Partition: p}] = me
	}
	m := awaitMember(z, group, time.Minute)
	done := make(chan error, 1)
	go func() { done <- m.awaitReleased(context.Background(), 1, mine, nil) }()
	reads := func() int {
		z.mu.Lock()
		defer z.mu.Unlock()
		return z.gets
	}
	require.Eventually(t, func() bool { return reads() == n }, 5*time.Second, time.Millisecond)
	// Released from the last to the first, so that the first one waited
	// for is the last to go.
	for p := int32(n - 1); p >= 0; p-- {
		select {
		case err := <-done:
			t.Fatalf("returned with %d nodes still held: %v", p+1, err)
		default:
		}
		require.NoError(t, z.Delete(context.Background(), path(p), 0))
		if p%50 == 0 {
			time.Sleep(10 * time.Millisecond) // let the waiter look
		}
	}
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting after every node was deleted")
	}
	require.Equal(t, n, reads(), "nodes read again while waiting")
	require.Empty(t, m.conflicts, "watches that fired are still kept")
}
