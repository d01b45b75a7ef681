package zkgroup

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestSweepReleasesOwnerNodesOutsideTheAssignment: after an owner node
// write with an unknown outcome, the member's next successful rebalance
// sweeps the group's owner nodes and deletes those its session holds for
// it outside its new assignment, also when nothing recorded them; nodes
// of other members, of other sessions and of its own assignment stay.
func TestSweepReleasesOwnerNodesOutsideTheAssignment(t *testing.T) {
	const group = "g"
	path := func(topic string, p int32) string { return zkutil.OwnerPath(group, topic, p) }
	me0 := zkutil.ConsumerThreadID{ConsumerID: "me", Thread: 0}
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{
		path("a", 0): {data: me0.String(), owner: 1},   // ours, leaked: swept
		path("a", 1): {data: "me-1", owner: 1},         // ours (thread 1), leaked: swept
		path("a", 2): {data: me0.String(), owner: 2},   // an earlier session's: not ours
		path("a", 3): {data: "peer-0", owner: 3},       // a peer's
		path("b", 0): {data: me0.String(), owner: 1},   // assigned to us: kept
		path("b", 1): {data: "me-garbage-x", owner: 1}, // not a thread id of ours
	}}
	m := awaitMember(z, group, time.Second)
	m.cfg.ConsumerID = "me"
	m.log = slog.New(slog.DiscardHandler)
	m.stale = map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	m.unsure = true
	view := zkassign.AssignmentContext{PartitionsForTopic: map[string][]int32{"a": {0, 1, 2, 3}, "b": {0, 1}}}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{{Topic: "b", Partition: 0}: me0}
	m.sweepOwners(context.Background(), z.Bind(1), view, mine)
	require.Equal(t, []string{path("b", 0), path("b", 1)}, z.ours(1))
	require.Contains(t, z.nodes, path("a", 2))
	require.Contains(t, z.nodes, path("a", 3))
	require.False(t, m.unsure, "a complete sweep clears the flag")

	// A sweep that cannot finish keeps the flag for the next rebalance.
	z.nodes[path("a", 0)] = ownerNode{data: me0.String(), owner: 1}
	z.failDeletes = true
	m.unsure = true
	m.sweepOwners(context.Background(), z.Bind(1), view, mine)
	require.True(t, m.unsure)
}
