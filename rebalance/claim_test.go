package rebalance

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ownerZK is an in-memory ZooKeeper of owner nodes for claim and release:
// each node has a value, an owning session and a version. onCreate runs
// after each create, with z.mu held (it may change z.nodes), so a test can
// let a peer act in between. It is safe for concurrent use.
type ownerZK struct {
	mu       sync.Mutex
	session  int64
	nodes    map[string]ownerNode
	onCreate func(path string)
	creates  int // creates attempted
	gets     int
	watches  map[string][]chan zkutil.WatchEvent // ExistsW, fired by Delete
}

type ownerNode struct {
	data    string
	owner   int64
	version int32
}

func (z *ownerZK) CreateEphemeral(_ context.Context, path string, data []byte) error {
	z.mu.Lock()
	z.creates++
	if _, ok := z.nodes[path]; ok {
		z.mu.Unlock()
		return zkutil.ErrNodeExists
	}
	z.nodes[path] = ownerNode{data: string(data), owner: z.session}
	if z.onCreate != nil {
		z.onCreate(path)
	}
	z.mu.Unlock()
	return nil
}

func (z *ownerZK) Get(_ context.Context, path string) ([]byte, zkutil.Stat, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.gets++
	n, ok := z.nodes[path]
	if !ok {
		return nil, zkutil.Stat{}, zkutil.ErrNoNode
	}
	return []byte(n.data), zkutil.Stat{EphemeralOwner: n.owner, Version: n.version}, nil
}

func (z *ownerZK) Delete(_ context.Context, path string, version int32) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	n, ok := z.nodes[path]
	switch {
	case !ok:
		return zkutil.ErrNoNode
	case version >= 0 && version != n.version:
		return zkutil.ErrBadVersion
	}
	delete(z.nodes, path)
	for _, ch := range z.watches[path] {
		ch <- zkutil.WatchEvent{Type: zkutil.NodeDeleted, Path: path}
		close(ch)
	}
	delete(z.watches, path)
	return nil
}

func (z *ownerZK) ExistsW(_ context.Context, path string) (bool, zkutil.Stat, <-chan zkutil.WatchEvent, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	ch := make(chan zkutil.WatchEvent, 1)
	n, ok := z.nodes[path]
	if !ok {
		return false, zkutil.Stat{}, nil, nil
	}
	if z.watches == nil {
		z.watches = map[string][]chan zkutil.WatchEvent{}
	}
	z.watches[path] = append(z.watches[path], ch)
	return true, zkutil.Stat{EphemeralOwner: n.owner, Version: n.version}, ch, nil
}

// watching returns how many watches are pending on path.
func (z *ownerZK) watching(path string) int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return len(z.watches[path])
}

// The parts of ZooKeeper claim and release do not use.
func (z *ownerZK) GetW(context.Context, string) ([]byte, zkutil.Stat, <-chan zkutil.WatchEvent, error) {
	panic("not used")
}
func (z *ownerZK) Children(context.Context, string) ([]string, error) { panic("not used") }
func (z *ownerZK) ChildrenW(context.Context, string) ([]string, <-chan zkutil.WatchEvent, error) {
	panic("not used")
}
func (z *ownerZK) Exists(context.Context, string) (bool, zkutil.Stat, error) { panic("not used") }
func (z *ownerZK) EnsurePath(context.Context, string) error                  { panic("not used") }
func (z *ownerZK) ID() int64                                                 { return z.session }
func (z *ownerZK) AwaitLease(context.Context, int64) error                   { return nil }
func (z *ownerZK) Subscribe() (<-chan zkutil.SessionEvent, func())           { panic("not used") }

var _ ZooKeeper = (*ownerZK)(nil)

// TestClaimRollbackSparesAPeersNode: a claim rolls back the nodes it
// created when it meets a conflict. If one of them was meanwhile replaced
// by a peer's node (our session expired, the peer claimed the partition),
// the rollback must leave the peer's node alone; it used to delete the
// path unconditionally.
func TestClaimRollbackSparesAPeersNode(t *testing.T) {
	const group, topic = "g", "t"
	p0, p1 := zkutil.OwnerPath(group, topic, 0), zkutil.OwnerPath(group, topic, 1)
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{
		p1: {data: "stranger-0", owner: 3}, // p1 conflicts
	}}
	z.onCreate = func(path string) {
		if path == p0 { // a peer takes p0 over right after our create
			z.nodes[p0] = ownerNode{data: "peer-0", owner: 2}
		}
	}
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{{Topic: topic, Partition: 0}: me, {Topic: topic, Partition: 1}: me}
	err := claim(context.Background(), z, 1, group, mine, nil, time.Second)
	var conflict *ConflictError
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, p1, conflict.Path)
	require.Equal(t, ownerNode{data: "peer-0", owner: 2}, z.nodes[p0], "the rollback deleted the peer's owner node")
}

// TestClaimRollbackRemovesOurNodes: without interference, the rollback
// removes exactly what the claim created.
func TestClaimRollbackRemovesOurNodes(t *testing.T) {
	const group, topic = "g", "t"
	p2 := zkutil.OwnerPath(group, topic, 2)
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{p2: {data: "stranger-0", owner: 3}}}
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for p := range int32(3) {
		mine[zkutil.TopicPartition{Topic: topic, Partition: p}] = me
	}
	require.Error(t, claim(context.Background(), z, 1, group, mine, nil, time.Second))
	require.Equal(t, map[string]ownerNode{p2: {data: "stranger-0", owner: 3}}, z.nodes)
}

// TestClaimKeepsHeldNodes: a held partition whose owner node is still ours
// is kept without a write; one whose node is gone is created again; one
// whose node holds our value in another session (an expired one's, not yet
// removed) is not ours and conflicts.
func TestClaimKeepsHeldNodes(t *testing.T) {
	const group, topic = "g", "t"
	path := func(p int32) string { return zkutil.OwnerPath(group, topic, p) }
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	tp := func(p int32) zkutil.TopicPartition { return zkutil.TopicPartition{Topic: topic, Partition: p} }
	kept := ownerNode{data: me.String(), owner: 1, version: 7} // a create would give version 0
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{path(0): kept}}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{tp(0): me, tp(1): me, tp(2): me}
	held := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{tp(0): me, tp(1): me}
	require.NoError(t, claim(context.Background(), z, 1, group, mine, held, time.Second))
	require.Equal(t, 2, z.creates, "only the partitions without our node are created")
	require.Equal(t, kept, z.nodes[path(0)])
	require.Equal(t, ownerNode{data: me.String(), owner: 1}, z.nodes[path(1)])
	require.Equal(t, ownerNode{data: me.String(), owner: 1}, z.nodes[path(2)])

	// Held, but the node belongs to an earlier session of ours.
	z = &ownerZK{session: 2, nodes: map[string]ownerNode{path(0): kept}}
	err := claim(context.Background(), z, 2, group, mine, held, time.Second)
	var conflict *ConflictError
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, path(0), conflict.Path)
	require.Equal(t, map[string]ownerNode{path(0): kept}, z.nodes, "nothing of ours is left behind")
}

// TestClaimRollbackReleasesHeldNodes: on a conflict the kept nodes are
// released with the created ones, so that the member holds nothing while
// it waits for the next attempt, as when it had released them first.
func TestClaimRollbackReleasesHeldNodes(t *testing.T) {
	const group, topic = "g", "t"
	p0, p1 := zkutil.OwnerPath(group, topic, 0), zkutil.OwnerPath(group, topic, 1)
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{
		p0: {data: me.String(), owner: 1},
		p1: {data: "stranger-0", owner: 3},
	}}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{{Topic: topic, Partition: 0}: me, {Topic: topic, Partition: 1}: me}
	held := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{{Topic: topic, Partition: 0}: me}
	require.Error(t, claim(context.Background(), z, 1, group, mine, held, time.Second))
	require.Equal(t, map[string]ownerNode{p1: {data: "stranger-0", owner: 3}}, z.nodes)
}
