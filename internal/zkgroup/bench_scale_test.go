package zkgroup

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// BenchmarkRebalanceScale measures how a rebalance grows with the group
// (issue #13, "Rebalance at scale"): groups of 10, 50 and 100 members, each
// a Member with its own ZooKeeper session and the connector's defaults
// (range assignor, one stream each), on a topic of 100 or 1,000
// partitions. Each op removes the oldest member, either gracefully (Close,
// then closing its session, as the connector's Shutdown does) or as a
// crash (its session is closed without Close: ZooKeeper deletes its
// registration and owner nodes at once, as it does when a crashed client's
// session times out; the detection time, zookeeper.session.timeout.ms,
// comes on top and is not measured here).
//
// settle-ms runs from the leave until every remaining member's handler
// holds exactly its share of the new assignment. A member claims its owner
// nodes before its handler is told, so by then every partition is owned in
// ZooKeeper by a remaining member; the owner nodes are checked against the
// assignment after each op. Then the group must stay quiet for 300ms, a
// new member joins and the group settles again, outside the timer.
//
// ZooKeeper operations are counted per remaining member, from the leave
// until the group is quiet again: creates, deletes, gets (with or without
// a watch), children and exists calls. moved/member is the partitions a
// member gained plus those it lost; writes/moved compares its writes
// with that; group-writes/op is the writes of all remaining members.
//
// Sizes can be narrowed with ZKCONSUMER_SCALE_MEMBERS and
// ZKCONSUMER_SCALE_PARTITIONS (comma-separated), e.g. on a loaded machine.
// With ZKCONSUMER_SCALE_TOPIC_IN_ZK set, the topic is only written to
// ZooKeeper, its replicas on a broker id that does not exist, so that the
// broker opens no files for it (a single broker cannot open 10,000
// partitions under a 20,000-descriptor limit); the members read only
// ZooKeeper, so the coordination measured is the same.
func BenchmarkRebalanceScale(b *testing.B) {
	memberCounts := scaleSizes(b, "ZKCONSUMER_SCALE_MEMBERS", []int{10, 50, 100})
	partitionCounts := scaleSizes(b, "ZKCONSUMER_SCALE_PARTITIONS", []int{100, 1000})
	for _, parts := range partitionCounts {
		for _, n := range memberCounts {
			b.Run(fmt.Sprintf("members=%d/partitions=%d", n, parts), func(b *testing.B) {
				g := newScaleGroup(b, n, parts)
				defer g.close(b)
				b.Run("leave=graceful", func(b *testing.B) { g.bench(b, false, false) })
				b.Run("leave=crash", func(b *testing.B) { g.bench(b, true, false) })
				b.Run("leave=graceful-youngest", func(b *testing.B) { g.bench(b, false, true) })
			})
		}
	}
}

func scaleSizes(b *testing.B, env string, def []int) []int {
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	var out []int
	for f := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			b.Fatalf("%s=%q: want sizes of at least 2", env, v)
		}
		out = append(out, n)
	}
	return out
}

// opCounter counts the ZooKeeper operations a member issues.
type opCounter struct {
	creates, deletes, gets, children, exists atomic.Int64
	trace                                    opTrace
}

func (c *opCounter) reset() {
	for _, v := range []*atomic.Int64{&c.creates, &c.deletes, &c.gets, &c.children, &c.exists} {
		v.Store(0)
	}
}

// countingZK is a ZooKeeper that counts the operations passed through,
// those of its Bounds included.
type countingZK struct {
	ZooKeeper
	n *opCounter
}

func (z countingZK) Get(ctx context.Context, p string) ([]byte, zksession.Stat, error) {
	defer z.n.trace.add("get", p, time.Now())
	z.n.gets.Add(1)
	return z.ZooKeeper.Get(ctx, p)
}

func (z countingZK) GetW(ctx context.Context, p string) ([]byte, zksession.Stat, <-chan zksession.WatchEvent, error) {
	defer z.n.trace.add("getw", p, time.Now())
	z.n.gets.Add(1)
	return z.ZooKeeper.GetW(ctx, p)
}

func (z countingZK) Children(ctx context.Context, p string) ([]string, error) {
	defer z.n.trace.add("children", p, time.Now())
	z.n.children.Add(1)
	return z.ZooKeeper.Children(ctx, p)
}

func (z countingZK) Exists(ctx context.Context, p string) (bool, zksession.Stat, error) {
	defer z.n.trace.add("exists", p, time.Now())
	z.n.exists.Add(1)
	return z.ZooKeeper.Exists(ctx, p)
}

func (z countingZK) ExistsW(ctx context.Context, p string) (bool, zksession.Stat, <-chan zksession.WatchEvent, error) {
	defer z.n.trace.add("existsw", p, time.Now())
	z.n.exists.Add(1)
	return z.ZooKeeper.ExistsW(ctx, p)
}

func (z countingZK) Bind(id int64) Bound { return countingIn{z.ZooKeeper.Bind(id), z.n} }

// countingIn is a Bound that counts the operations passed through.
type countingIn struct {
	Bound
	n *opCounter
}

func (z countingIn) Get(ctx context.Context, p string) ([]byte, zksession.Stat, error) {
	defer z.n.trace.add("get", p, time.Now())
	z.n.gets.Add(1)
	return z.Bound.Get(ctx, p)
}

func (z countingIn) GetW(ctx context.Context, p string) ([]byte, zksession.Stat, <-chan zksession.WatchEvent, error) {
	defer z.n.trace.add("getw", p, time.Now())
	z.n.gets.Add(1)
	return z.Bound.GetW(ctx, p)
}

func (z countingIn) ChildrenW(ctx context.Context, p string) ([]string, <-chan zksession.WatchEvent, error) {
	defer z.n.trace.add("childrenw", p, time.Now())
	z.n.children.Add(1)
	return z.Bound.ChildrenW(ctx, p)
}

func (z countingIn) Exists(ctx context.Context, p string) (bool, zksession.Stat, error) {
	defer z.n.trace.add("exists", p, time.Now())
	z.n.exists.Add(1)
	return z.Bound.Exists(ctx, p)
}

func (z countingIn) ExistsW(ctx context.Context, p string) (bool, zksession.Stat, <-chan zksession.WatchEvent, error) {
	defer z.n.trace.add("existsw", p, time.Now())
	z.n.exists.Add(1)
	return z.Bound.ExistsW(ctx, p)
}

func (z countingIn) CreateEphemeral(ctx context.Context, p string, data []byte) error {
	defer z.n.trace.add("create", p, time.Now())
	z.n.creates.Add(1)
	return z.Bound.CreateEphemeral(ctx, p, data)
}

func (z countingIn) EnsurePath(ctx context.Context, p string) error {
	defer z.n.trace.add("exists", p, time.Now())
	z.n.exists.Add(1) // an exists, and creates only when missing
	return z.Bound.EnsurePath(ctx, p)
}

func (z countingIn) Delete(ctx context.Context, p string, version int32) error {
	defer z.n.trace.add("delete", p, time.Now())
	z.n.deletes.Add(1)
	return z.Bound.Delete(ctx, p, version)
}

func (z countingIn) DeleteEphemeral(ctx context.Context, p string, version int32) error {
	defer z.n.trace.add("delete", p, time.Now())
	z.n.deletes.Add(1)
	return z.Bound.DeleteEphemeral(ctx, p, version)
}

func (z countingIn) Multi(ctx context.Context, ops ...zksession.Op) error {
	defer z.n.trace.add("multi", "", time.Now())
	for _, op := range ops {
		if op.Kind == zksession.OpDelete {
			z.n.deletes.Add(1)
		} else {
			z.n.creates.Add(1)
		}
	}
	return z.Bound.Multi(ctx, ops...)
}

// scaleMember is a counted member of a scaleGroup.
type scaleMember struct {
	*benchMember
	ops *opCounter
}

// scaleGroup is a group of members on one topic.
type scaleGroup struct {
	c        *testcluster.Cluster
	observer *zksession.Session
	topic    string
	group    string
	parts    int
	assignor zkassign.Assignor
	assigned chan struct{}
	seq      int
	members  []*scaleMember
}

func newScaleGroup(b *testing.B, n, parts int) *scaleGroup {
	c := testcluster.Shared(b)
	observer, err := zksession.Dial(context.Background(), zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	topic := testcluster.UniqueName(fmt.Sprintf("rb-scale-%d", parts))
	if os.Getenv("ZKCONSUMER_SCALE_TOPIC_IN_ZK") != "" {
		err = createTopicNode(ctx, observer, topic, parts)
	} else {
		err = c.CreateTopic(ctx, topic, int32(parts), 1)
	}
	cancel()
	if err != nil {
		observer.Close()
		b.Fatal(err)
	}
	assignor, _ := zkassign.NewAssignor(strategyname.Range)
	g := &scaleGroup{c: c, observer: observer, topic: topic, group: testcluster.UniqueName("g-scale"), parts: parts,
		assignor: assignor, assigned: make(chan struct{}, 1)}
	// Join in parallel: one at a time, every join would rebalance the
	// whole group again.
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range n {
		id := g.nextID()
		wg.Go(func() {
			m := g.start(b, id)
			if m == nil {
				return // start reported why
			}
			mu.Lock()
			g.members = append(g.members, m)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(g.members) < n {
		g.close(b)
		b.Fatalf("%d of %d members did not start", n-len(g.members), n)
	}
	// Oldest first: the ids sort in join order.
	slices.SortFunc(g.members, func(x, y *scaleMember) int { return strings.Compare(x.id, y.id) })
	g.settle(b, 5*time.Minute)
	return g
}

func (g *scaleGroup) nextID() string {
	id := fmt.Sprintf("%s_m%05d", g.group, g.seq)
	g.seq++
	return id
}

func (g *scaleGroup) start(b *testing.B, id string) *scaleMember {
	b.Helper()
	ctx := context.Background()
	s, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: g.c.ZKConnect(), SessionTimeout: benchSessionTime, ConnectionTimeout: 20 * time.Second})
	if err != nil {
		b.Error(err)
		return nil
	}
	ops := &opCounter{}
	bm := &benchMember{id: id, session: s, rec: &recorder{}}
	m, err := NewMember(countingZK{Session(s), ops}, MemberConfig{Group: g.group, ConsumerID: id, Subscription: StaticSubscription(map[string]int{g.topic: 1}), ExcludeInternalTopics: true,
		Assignor: g.assignor, MaxRetries: benchMaxRetries, Backoff: benchBackoff, SessionTimeout: benchSessionTime,
		Handler: tracingHandler{signalingRecorder{bm.rec, g.assigned}, &ops.trace}, Logger: testLogger()})
	if err != nil {
		b.Error(err)
		return nil
	}
	bm.Member = m
	if err := m.Start(ctx); err != nil {
		b.Error(err)
	}
	return &scaleMember{benchMember: bm, ops: ops}
}

func (g *scaleGroup) close(b *testing.B) {
	var wg sync.WaitGroup
	for _, m := range g.members {
		wg.Go(func() { m.leave(b) })
	}
	wg.Wait()
	g.observer.Close()
}

// shares is the assignment of the topic among members.
func (g *scaleGroup) shares(b *testing.B, members []*scaleMember) map[string]map[zkutil.TopicPartition]zkutil.ConsumerThreadID {
	b.Helper()
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.id
	}
	slices.Sort(ids)
	parts := make([]int32, g.parts)
	for i := range parts {
		parts[i] = int32(i)
	}
	actx := zkassign.AssignmentContext{ConsumerID: ids[0], ConsumersForTopic: map[string][]zkutil.ConsumerThreadID{},
		PartitionsForTopic: map[string][]int32{g.topic: parts}, Consumers: ids}
	sub := StaticSubscription(map[string]int{g.topic: 1})
	for _, id := range ids {
		threads := sub.ThreadIDs(id, nil, true)
		if id == ids[0] {
			actx.MyTopicThreadIDs = threads
		}
		actx.ConsumersForTopic[g.topic] = append(actx.ConsumersForTopic[g.topic], threads[g.topic]...)
	}
	want, err := g.assignor.Assign(actx)
	if err != nil {
		b.Fatal(err)
	}
	return want
}

func benchMembers(ms []*scaleMember) []*benchMember {
	out := make([]*benchMember, len(ms))
	for i, m := range ms {
		out[i] = m.benchMember
	}
	return out
}

// settle waits until the group holds the assignment, its owner nodes agree
// and no member starts a generation for 300ms.
func (g *scaleGroup) settle(b *testing.B, timeout time.Duration) {
	b.Helper()
	want := g.shares(b, g.members)
	for attempt := 0; ; attempt++ {
		if err := waitShares(benchMembers(g.members), want, g.assigned, timeout); err != nil {
			b.Fatal(err)
		}
		if g.quiet() {
			if err := g.checkOwners(want); err != nil {
				b.Fatal(err)
			}
			return
		}
		if attempt == 20 {
			b.Fatal("the group keeps rebalancing")
		}
	}
}

// quiet reports whether no member started a generation for 300ms.
func (g *scaleGroup) quiet() bool {
	gens := make([]int, len(g.members))
	for i, m := range g.members {
		gens[i] = m.generations()
	}
	time.Sleep(300 * time.Millisecond)
	for i, m := range g.members {
		if m.generations() != gens[i] {
			return false
		}
	}
	return true
}

func (g *scaleGroup) checkOwners(want map[string]map[zkutil.TopicPartition]zkutil.ConsumerThreadID) error {
	owners, err := ownersOf(context.Background(), g.observer, g.group, []string{g.topic})
	if err != nil {
		return err
	}
	flat := map[zkutil.TopicPartition]string{}
	for _, share := range want {
		for tp, th := range share {
			flat[tp] = th.String()
		}
	}
	if len(flat) != g.parts || !maps.Equal(owners, flat) {
		return fmt.Errorf("%d owner nodes, want %d as assigned (equal: %v)", len(owners), len(flat), maps.Equal(owners, flat))
	}
	return nil
}

// bench removes the oldest member per op, gracefully or by crash, and
// measures until the remaining members hold the new assignment.
//
// With youngest the member that joined last leaves instead of the oldest:
// under the range assignor fewer partitions move then, which tells writes
// that follow the moves from writes that follow what a member owns.
func (g *scaleGroup) bench(b *testing.B, crash, youngest bool) {
	var (
		took                                      []time.Duration
		creates, deletes, gets, children, exists  int64
		moved, memberOps                          int
		leaverCreates, leaverDeletes, leaverReads int64
		assigns                                   int
		ph                                        phases
	)
	ph.idle(func() { g.quiet() }) // 300ms with the group idle
	startProfile(b)
	for b.Loop() {
		leaver, rest := g.members[0], slices.Clone(g.members[1:])
		if youngest {
			last := len(g.members) - 1
			leaver, rest = g.members[last], slices.Clone(g.members[:last])
		}
		before := g.shares(b, g.members)
		want := g.shares(b, rest)
		gens := make([]int, len(rest))
		for i, m := range rest {
			m.ops.reset()
			gens[i] = m.generations()
			for tp := range want[m.id] {
				if _, ok := before[m.id][tp]; !ok {
					moved++
				}
			}
			for tp := range before[m.id] {
				if _, ok := want[m.id][tp]; !ok {
					moved++
				}
			}
		}
		leaver.ops.reset()
		for _, m := range rest {
			m.ops.trace.begin()
		}
		leaver.ops.trace.begin()
		cpu0, zk0 := cpuSelf(), cpuZK()
		start := time.Now()
		if crash {
			// The session ends without the member releasing anything.
			if err := leaver.session.Close(); err != nil {
				b.Fatal(err)
			}
		} else {
			leaver.leave(b)
		}
		if err := waitShares(benchMembers(rest), want, g.assigned, 2*time.Minute); err != nil {
			b.Fatalf("after %s left: %v", leaver.id, err)
		}
		d := time.Since(start)
		b.StopTimer()
		ph.cpuSelf += cpuSelf() - cpu0
		ph.cpuZK += cpuZK() - zk0
		took = append(took, d)
		traces := make([][]span, len(rest))
		for i, m := range rest {
			traces[i] = m.ops.trace.end()
		}
		from := start
		if !crash {
			if t := deregisteredAt(leaver.ops.trace.end(), g.group, leaver.id); !t.IsZero() {
				from = t
			}
		}
		ph.cut(traces, g.group, start, from, start.Add(d))
		g.members = rest
		for i := 0; !g.quiet(); i++ {
			if i == 20 {
				b.Fatal("the group keeps rebalancing")
			}
		}
		if err := g.checkOwners(want); err != nil {
			b.Fatal(err)
		}
		for i, m := range rest {
			creates += m.ops.creates.Load()
			deletes += m.ops.deletes.Load()
			gets += m.ops.gets.Load()
			children += m.ops.children.Load()
			exists += m.ops.exists.Load()
			assigns += m.generations() - gens[i]
		}
		memberOps += len(rest)
		leaverCreates += leaver.ops.creates.Load()
		leaverDeletes += leaver.ops.deletes.Load()
		leaverReads += leaver.ops.gets.Load() + leaver.ops.exists.Load() + leaver.ops.children.Load()
		if crash {
			// End the member's goroutines; its session is gone already.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_ = leaver.Close(ctx)
			cancel()
			leaver.session = nil
		}
		if m := g.start(b, g.nextID()); m != nil {
			g.members = append(g.members, m)
		}
		g.settle(b, 3*time.Minute)
		b.StartTimer()
	}
	slices.Sort(took)
	n := float64(len(took))
	var total time.Duration
	for _, d := range took {
		total += d
	}
	per := func(v int64) float64 { return float64(v) / float64(memberOps) }
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ms(total)/n, "settle-ms")
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[len(took)-1]), "max-ms")
	b.ReportMetric(float64(assigns)/n, "assigns/op")
	b.ReportMetric(per(creates), "creates/member")
	b.ReportMetric(per(deletes), "deletes/member")
	b.ReportMetric(per(gets), "gets/member")
	b.ReportMetric(per(children), "children/member")
	b.ReportMetric(per(exists), "exists/member")
	b.ReportMetric(per(int64(moved)), "moved/member")
	if moved > 0 {
		b.ReportMetric(float64(creates+deletes)/float64(moved), "writes/moved")
	}
	b.ReportMetric(float64(creates+deletes)/n, "group-writes/op")
	b.ReportMetric(float64(leaverCreates+leaverDeletes)/n, "leaver-writes/op")
	b.ReportMetric(float64(leaverReads)/n, "leaver-reads/op")
	ph.report(b)
}

// createTopicNode writes the partition map of a topic of parts partitions
// to ZooKeeper, every replica on broker 999999, which does not exist: the
// controller leaves the partitions offline and the broker opens nothing.
func createTopicNode(ctx context.Context, zk *zksession.Session, topic string, parts int) error {
	var sb strings.Builder
	sb.WriteString(`{"version":1,"partitions":{`)
	for p := range parts {
		if p > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"%d":[999999]`, p)
	}
	sb.WriteString(`}}`)
	if err := zk.EnsurePath(ctx, zkbrokers.BrokerTopicsPath); err != nil {
		return err
	}
	return zk.CreatePersistent(ctx, zkbrokers.TopicPath(topic), []byte(sb.String()))
}
