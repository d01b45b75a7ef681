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
// after each create, so a test can let a peer act in between.
type ownerZK struct {
	mu       sync.Mutex
	session  int64
	nodes    map[string]ownerNode
	onCreate func(path string)
}

type ownerNode struct {
	data    string
	owner   int64
	version int32
}

func (z *ownerZK) CreateEphemeral(_ context.Context, path string, data []byte) error {
	z.mu.Lock()
	if _, ok := z.nodes[path]; ok {
		z.mu.Unlock()
		return zkutil.ErrNodeExists
	}
	z.nodes[path] = ownerNode{data: string(data), owner: z.session}
	z.mu.Unlock()
	if z.onCreate != nil {
		z.onCreate(path)
	}
	return nil
}

func (z *ownerZK) Get(_ context.Context, path string) ([]byte, zkutil.Stat, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
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
	return nil
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
func (z *ownerZK) ExistsW(context.Context, string) (bool, zkutil.Stat, <-chan zkutil.WatchEvent, error) {
	panic("not used")
}
func (z *ownerZK) EnsurePath(context.Context, string) error        { panic("not used") }
func (z *ownerZK) ID() int64                                       { return z.session }
func (z *ownerZK) AwaitLease(context.Context, int64) error         { return nil }
func (z *ownerZK) Subscribe() (<-chan zkutil.SessionEvent, func()) { panic("not used") }

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
	err := claim(context.Background(), z, 1, group, mine, time.Second)
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
	require.Error(t, claim(context.Background(), z, 1, group, mine, time.Second))
	require.Equal(t, map[string]ownerNode{p2: {data: "stranger-0", owner: 3}}, z.nodes)
}
