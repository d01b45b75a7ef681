package zkgroup

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ownerZK is an in-memory ZooKeeper of owner nodes for claim and release:
// each node has a value, an owning session and a version. onCreate runs
// after each create, with z.mu held (it may change z.nodes), so a test can
// let a peer act in between. It is safe for concurrent use.
//
// Like zksession.Session, an operation whose context has ended does nothing
// and returns the context's error, and one that has started is carried out
// even if the context ends meanwhile (createDelay models its round trip).
// failDeletes makes deletes fail, as with ZooKeeper unreachable. expired
// makes the member's operations (CreateEphemeral, Get, GetW,
// DeleteEphemeral: claim and release bind them to the session) fail with
// ErrSessionExpired, as zkutil does once their session is gone; Delete,
// which the tests use for peers, still works.
type ownerZK struct {
	mu          sync.Mutex
	session     int64
	nodes       map[string]ownerNode
	onCreate    func(path string)
	creates     int                                    // creates attempted
	gets        int                                    // reads, with and without a watch
	deletes     int                                    // DeleteEphemeral calls and deletes in transactions
	watches     map[string][]chan zksession.WatchEvent // ExistsW, fired by Delete
	createDelay time.Duration
	// createWait, if set, replaces createDelay for single creates: it is
	// called with the operation's context before the create is carried
	// out (a create that has started completes even if it ends meanwhile).
	createWait  func(ctx context.Context)
	failDeletes bool
	expired     bool
	multis      int  // transactions attempted
	multiLost   bool // transactions fail with ErrOutcomeUnknown, unapplied
}

// Multi applies creates and deletes all or none, in one round trip
// (createDelay when it creates).
func (z *ownerZK) Multi(ctx context.Context, ops ...zksession.Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, op := range ops {
		if op.Kind == zksession.OpCreateEphemeral {
			time.Sleep(z.createDelay)
			break
		}
	}
	if err := z.gone(); err != nil {
		return err
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	z.multis++
	if z.multiLost {
		return zksession.ErrOutcomeUnknown
	}
	for _, op := range ops {
		n, ok := z.nodes[op.Path]
		switch {
		case op.Kind == zksession.OpCreateEphemeral && ok:
			return zksession.ErrNodeExists
		case op.Kind == zksession.OpDelete && z.failDeletes:
			return zksession.ErrOutcomeUnknown
		case op.Kind == zksession.OpDelete && !ok:
			return zksession.ErrNoNode
		case op.Kind == zksession.OpDelete && op.Version >= 0 && op.Version != n.version:
			return zksession.ErrBadVersion
		}
	}
	for _, op := range ops {
		if op.Kind == zksession.OpDelete {
			z.deletes++
			z.deleteLocked(op.Path)
			continue
		}
		z.creates++
		z.nodes[op.Path] = ownerNode{data: string(op.Data), owner: z.session}
		if z.onCreate != nil {
			z.onCreate(op.Path)
		}
	}
	return nil
}

// deleteLocked deletes the node at path and fires its watches.
func (z *ownerZK) deleteLocked(path string) {
	delete(z.nodes, path)
	for _, ch := range z.watches[path] {
		ch <- zksession.WatchEvent{Type: zksession.NodeDeleted, Path: path}
		close(ch)
	}
	delete(z.watches, path)
}

// gone is the error of a bound operation once the session expired.
func (z *ownerZK) gone() error {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.expired {
		return zksession.ErrSessionExpired
	}
	return nil
}

type ownerNode struct {
	data    string
	owner   int64
	version int32
}

func (z *ownerZK) CreateEphemeral(ctx context.Context, path string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if z.createWait != nil {
		z.createWait(ctx)
	} else {
		time.Sleep(z.createDelay)
	}
	if err := z.gone(); err != nil {
		return err
	}
	z.mu.Lock()
	z.creates++
	if _, ok := z.nodes[path]; ok {
		z.mu.Unlock()
		return zksession.ErrNodeExists
	}
	z.nodes[path] = ownerNode{data: string(data), owner: z.session}
	if z.onCreate != nil {
		z.onCreate(path)
	}
	z.mu.Unlock()
	return nil
}

func (z *ownerZK) Get(ctx context.Context, path string) ([]byte, zksession.Stat, error) {
	if err := ctx.Err(); err != nil {
		return nil, zksession.Stat{}, err
	}
	if err := z.gone(); err != nil {
		return nil, zksession.Stat{}, err
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	z.gets++
	n, ok := z.nodes[path]
	if !ok {
		return nil, zksession.Stat{}, zksession.ErrNoNode
	}
	return []byte(n.data), zksession.Stat{EphemeralOwner: n.owner, Version: n.version}, nil
}

func (z *ownerZK) Delete(ctx context.Context, path string, version int32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	n, ok := z.nodes[path]
	switch {
	case z.failDeletes:
		return zksession.ErrConnectionLoss
	case !ok:
		return zksession.ErrNoNode
	case version >= 0 && version != n.version:
		return zksession.ErrBadVersion
	}
	z.deleteLocked(path)
	return nil
}

// DeleteEphemeral is Delete: the fake loses no connection, so there is no
// retry to guard.
func (z *ownerZK) DeleteEphemeral(ctx context.Context, path string, version int32) error {
	if err := z.gone(); err != nil {
		return err
	}
	z.mu.Lock()
	z.deletes++
	z.mu.Unlock()
	return z.Delete(ctx, path, version)
}

func (z *ownerZK) GetW(ctx context.Context, path string) ([]byte, zksession.Stat, <-chan zksession.WatchEvent, error) {
	data, stat, err := z.Get(ctx, path)
	if err != nil {
		return nil, zksession.Stat{}, nil, err
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	ch := make(chan zksession.WatchEvent, 1)
	if z.watches == nil {
		z.watches = map[string][]chan zksession.WatchEvent{}
	}
	z.watches[path] = append(z.watches[path], ch)
	return data, stat, ch, nil
}

func (z *ownerZK) ExistsW(_ context.Context, path string) (bool, zksession.Stat, <-chan zksession.WatchEvent, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	ch := make(chan zksession.WatchEvent, 1)
	n, ok := z.nodes[path]
	if !ok {
		return false, zksession.Stat{}, nil, nil
	}
	if z.watches == nil {
		z.watches = map[string][]chan zksession.WatchEvent{}
	}
	z.watches[path] = append(z.watches[path], ch)
	return true, zksession.Stat{EphemeralOwner: n.owner, Version: n.version}, ch, nil
}

// watching returns how many watches are pending on path.
func (z *ownerZK) watching(path string) int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return len(z.watches[path])
}

// The parts of ZooKeeper claim and release do not use.
func (z *ownerZK) Children(context.Context, string) ([]string, error) { panic("not used") }
func (z *ownerZK) ChildrenW(context.Context, string) ([]string, <-chan zksession.WatchEvent, error) {
	panic("not used")
}
func (z *ownerZK) Exists(context.Context, string) (bool, zksession.Stat, error) { panic("not used") }
func (z *ownerZK) EnsurePath(context.Context, string) error                     { panic("not used") }
func (z *ownerZK) CreatePersistent(context.Context, string, []byte) error       { panic("not used") }
func (z *ownerZK) Set(context.Context, string, []byte, int32) (zksession.Stat, error) {
	panic("not used")
}
func (z *ownerZK) WatchMark(string) zksession.WatchMark               { return zksession.WatchMark{} }
func (z *ownerZK) ID() int64                                          { return z.session }
func (z *ownerZK) Subscribe() (<-chan zksession.SessionEvent, func()) { panic("not used") }

// Bind returns z's operations as those of session id. Like the others,
// they are z's own: the fake has one session, and ignores the binding
// but for ID (the session claim and release compare owners with).
func (z *ownerZK) Bind(id int64) Bound { return ownerIn{z, id} }

// ownerIn is ownerZK's Bound.
type ownerIn struct {
	*ownerZK
	id int64
}

func (b ownerIn) ID() int64                        { return b.id }
func (b ownerIn) AwaitLease(context.Context) error { return nil }

var (
	_ ZooKeeper = (*ownerZK)(nil)
	_ Bound     = ownerIn{}
)

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
		if path == p0 { // our session expires, a peer takes p0 over
			z.nodes[p0] = ownerNode{data: "peer-0", owner: 2}
			z.expired = true
		}
	}
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{{Topic: topic, Partition: 0}: me, {Topic: topic, Partition: 1}: me}
	_, err := claim(context.Background(), z.Bind(1), group, mine, nil, nil, time.Second)
	require.Error(t, err) // p1's conflict, or the expiry if p1 came after it
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
	_, err := claim(context.Background(), z.Bind(1), group, mine, nil, nil, time.Second)
	require.Error(t, err)
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
	_, err := claim(context.Background(), z.Bind(1), group, mine, held, nil, time.Second)
	require.NoError(t, err)
	require.Equal(t, 2, z.creates, "only the partitions without our node are created")
	require.Equal(t, kept, z.nodes[path(0)])
	require.Equal(t, ownerNode{data: me.String(), owner: 1}, z.nodes[path(1)])
	require.Equal(t, ownerNode{data: me.String(), owner: 1}, z.nodes[path(2)])

	// Held, but the node belongs to an earlier session of ours.
	z = &ownerZK{session: 2, nodes: map[string]ownerNode{path(0): kept}}
	_, err = claim(context.Background(), z.Bind(2), group, mine, held, nil, time.Second)
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
	_, err := claim(context.Background(), z.Bind(1), group, mine, held, nil, time.Second)
	require.Error(t, err)
	require.Equal(t, map[string]ownerNode{p1: {data: "stranger-0", owner: 3}}, z.nodes)
}

// ours returns the owner nodes session holds in z.
func (z *ownerZK) ours(session int64) []string {
	z.mu.Lock()
	defer z.mu.Unlock()
	var paths []string
	for p, n := range z.nodes {
		if n.owner == session {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths
}

// TestClaimTimeoutLeavesNoOrphans is item 2 of the ensemble safety issue:
// a claim that ran out of time rolled back with its own, already ended,
// context, so it deleted nothing, and left owner nodes nobody released
// (200 partitions, 20 ms creates, 16 in flight, a 100 ms timeout: 80
// orphaned nodes). Here 4 x zkInFlight partitions: the first zkInFlight
// creates are answered at once, the later ones only after the claim's
// time is up (and are then carried out, as a create in flight is), so the
// claim times out with creates both done and in flight, however slowly
// the machine runs it (it timed 50 ms creates against a 100 ms timeout,
// and at load 50 no create had run by then).
// Now the creates in flight are waited for and the rollback has a deadline
// of its own: nothing of ours is left.
func TestClaimTimeoutLeavesNoOrphans(t *testing.T) {
	const group, topic = "g", "t"
	// Transactions fail unapplied, so that every node takes the per-node
	// path this test is about.
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{}, multiLost: true}
	var answered atomic.Int32
	z.createWait = func(ctx context.Context) {
		if answered.Add(1) > zkInFlight {
			<-ctx.Done()
			time.Sleep(10 * time.Millisecond)
		}
	}
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	n := 4 * zkInFlight
	for p := range int32(n) {
		mine[zkutil.TopicPartition{Topic: topic, Partition: p}] = me
	}
	left, err := claim(context.Background(), z.Bind(1), group, mine, nil, nil, 2*time.Second)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Positive(t, z.creates, "some creates ran before the timeout")
	require.Less(t, z.creates, n, "the timeout stopped the claim")
	require.Empty(t, z.ours(1), "owner nodes orphaned by the claim's rollback")
	require.Empty(t, left)
}

// TestClaimRollbackReportsWhatItCouldNotDelete: when the rollback cannot
// delete (ZooKeeper unreachable), the nodes that may still be ours are
// returned, and a member keeps them in its release list and releases them
// at its next try.
func TestClaimRollbackReportsWhatItCouldNotDelete(t *testing.T) {
	const group, topic = "g", "t"
	p3 := zkutil.OwnerPath(group, topic, 3)
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{p3: {data: "stranger-0", owner: 3}}}
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for p := range int32(4) {
		mine[zkutil.TopicPartition{Topic: topic, Partition: p}] = me
	}
	z.onCreate = func(string) { z.failDeletes = true } // ZooKeeper goes away after the creates
	left, err := claim(context.Background(), z.Bind(1), group, mine, nil, nil, time.Second)
	var conflict *ConflictError
	require.ErrorAs(t, err, &conflict)
	require.ErrorIs(t, err, zksession.ErrConnectionLoss)
	require.Len(t, z.ours(1), 3)
	require.Len(t, left, 3, "every node the rollback could not delete is reported")

	m := awaitMember(z, group, time.Second)
	m.stale = left
	z.mu.Lock()
	z.failDeletes = false
	z.mu.Unlock()
	require.NoError(t, m.releaseStale(context.Background()))
	require.Empty(t, z.ours(1))
	require.Empty(t, m.stale)
}

// TestReleaseDeletesKnownNodesWithoutReading: the nodes a claim created
// are released with one conditional delete each and no read (a read before
// every delete doubled the round trips of a hand-over); a node the member
// does not know as held is read first and deleted only if it is ours; a
// known node whose version is not the one recorded is read, and left alone
// when it is not ours. Every released partition leaves the record.
func TestReleaseDeletesKnownNodesWithoutReading(t *testing.T) {
	const group, topic = "g", "t"
	path := func(p int32) string { return zkutil.OwnerPath(group, topic, p) }
	tp := func(p int32) zkutil.TopicPartition { return zkutil.TopicPartition{Topic: topic, Partition: p} }
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{}}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for p := range int32(300) {
		mine[tp(p)] = me
	}
	known := ownedNodes{}
	_, err := claim(context.Background(), z.Bind(1), group, mine, nil, known, time.Second)
	require.NoError(t, err)
	require.Len(t, known, 300)

	// Not recorded, but ours (a node of an attempt whose outcome was
	// unknown): read, then deleted. Recorded with another version: read,
	// and a peer's node is spared.
	z.nodes[path(300)] = ownerNode{data: me.String(), owner: 1}
	mine[tp(300)] = me
	z.nodes[path(0)] = ownerNode{data: "peer-0", owner: 1, version: 2}
	z.gets = 0
	left, err := release(context.Background(), z.Bind(1), group, mine, known)
	require.NoError(t, err)
	require.Empty(t, left)
	require.Equal(t, 2, z.gets, "only the unrecorded node and the one of another version are read")
	require.Equal(t, 301, z.deletes, "one delete per node (for the peer's, the conditional one that failed)")
	require.Equal(t, map[string]ownerNode{path(0): {data: "peer-0", owner: 1, version: 2}}, z.nodes)
	require.Empty(t, known, "released partitions stay recorded")
}

// TestReleaseInAnotherSessionReadsFirst: nodes recorded in one session are
// not deleted blindly by a release in another (after an expiry the path
// may hold a peer's node of the same version): they are read, and a peer's
// node is left alone.
func TestReleaseInAnotherSessionReadsFirst(t *testing.T) {
	const group, topic = "g", "t"
	p0 := zkutil.OwnerPath(group, topic, 0)
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{{Topic: topic, Partition: 0}: me}
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{}}
	known := ownedNodes{}
	_, err := claim(context.Background(), z.Bind(1), group, mine, nil, known, time.Second)
	require.NoError(t, err)
	// Session 1 expires; a peer claims the partition; we are in session 2.
	z.nodes[p0] = ownerNode{data: "peer-0", owner: 3}
	z.session = 2
	_, err = release(context.Background(), z.Bind(2), group, mine, known)
	require.NoError(t, err)
	require.Equal(t, ownerNode{data: "peer-0", owner: 3}, z.nodes[p0])
	require.Equal(t, 1, z.gets)
}

// TestClaimAndReleaseInTransactions: a claim creates its nodes in
// transactions of up to zkMultiOps, and their release deletes them the
// same way, without a read; ZooKeeper then sees 2 transactions for 300
// nodes each way instead of 300 requests (600 with the reads).
func TestClaimAndReleaseInTransactions(t *testing.T) {
	const group, topic = "g", "t"
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{}}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for p := range int32(300) {
		mine[zkutil.TopicPartition{Topic: topic, Partition: p}] = me
	}
	known := ownedNodes{}
	_, err := claim(context.Background(), z.Bind(1), group, mine, nil, known, time.Second)
	require.NoError(t, err)
	require.Equal(t, 2, z.multis)
	require.Equal(t, 300, z.creates)
	require.Len(t, z.ours(1), 300)
	require.Zero(t, z.gets)
	_, err = release(context.Background(), z.Bind(1), group, mine, known)
	require.NoError(t, err)
	require.Equal(t, 4, z.multis)
	require.Zero(t, z.gets)
	require.Empty(t, z.nodes)
	require.Empty(t, known)
}

// TestClaimConflictInATransaction: a transaction that meets a conflict
// creates nothing; its partitions are claimed node by node, which finds
// the conflict; everything created is rolled back, and nothing is left
// recorded as held (partitions the claim never reached were recorded as
// held at version 0, which a later release would have deleted blindly).
func TestClaimConflictInATransaction(t *testing.T) {
	const group, topic = "g", "t"
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	p0 := zkutil.OwnerPath(group, topic, 0)
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{p0: {data: "stranger-0", owner: 3}}}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for p := range int32(600) {
		mine[zkutil.TopicPartition{Topic: topic, Partition: p}] = me
	}
	known := ownedNodes{}
	_, err := claim(context.Background(), z.Bind(1), group, mine, nil, known, time.Second)
	var conflict *ConflictError
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, p0, conflict.Path)
	require.Equal(t, map[string]ownerNode{p0: {data: "stranger-0", owner: 3}}, z.nodes)
	require.Empty(t, known)
}

// TestReleaseAfterATransactionOfUnknownOutcome: a transaction of deletes
// whose connection was lost may have been applied, and a peer may have
// claimed a partition since, with a node of the same version. Its
// partitions are read before any further delete: the peer's node stays.
func TestReleaseAfterATransactionOfUnknownOutcome(t *testing.T) {
	const group, topic = "g", "t"
	me := zkutil.ConsumerThreadID{ConsumerID: "me"}
	p0 := zkutil.OwnerPath(group, topic, 0)
	z := &ownerZK{session: 1, nodes: map[string]ownerNode{}}
	mine := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for p := range int32(3) {
		mine[zkutil.TopicPartition{Topic: topic, Partition: p}] = me
	}
	known := ownedNodes{}
	_, err := claim(context.Background(), z.Bind(1), group, mine, nil, known, time.Second)
	require.NoError(t, err)
	// Applied, then lost: our nodes are gone, a peer holds p0.
	z.nodes = map[string]ownerNode{p0: {data: "peer-0", owner: 2}}
	z.multiLost = true
	_, err = release(context.Background(), z.Bind(1), group, mine, known)
	require.NoError(t, err)
	require.Equal(t, map[string]ownerNode{p0: {data: "peer-0", owner: 2}}, z.nodes)
	require.Equal(t, 3, z.gets)
}
