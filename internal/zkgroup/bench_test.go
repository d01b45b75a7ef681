package zkgroup

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// Settings of the members in BenchmarkGracefulLeaveRebalance: the
// connector's defaults (Kafka 1.1.1's), which it passes to its Member:
// rebalance.backoff.ms follows zookeeper.sync.time.ms (2000),
// rebalance.max.retries 4 and zookeeper.session.timeout.ms 6000.
const (
	benchGroupSize   = 4
	benchPartitions  = 32
	benchBackoff     = 2000 * time.Millisecond
	benchMaxRetries  = 4
	benchSessionTime = 6000 * time.Millisecond
)

// BenchmarkGracefulLeaveRebalance measures how long a group of four
// members takes to hand over all 32 partitions of a topic when one member
// leaves gracefully (Close, then closing its ZooKeeper session, as the
// connector's Shutdown does): from the start of Close until each of the
// three remaining members' handlers holds exactly its share of the
// three-member assignment. The owner nodes are then checked against that
// assignment, and a new fourth member joins, outside the timer; the group
// must converge and stay quiet before the next op. The oldest member
// leaves each time, so the leaver is always first in the group's order.
//
// Metrics: ms/op is the mean; p50-ms, p90-ms and max-ms the distribution;
// close-ms the leaver's own Close and session close; assigns/op the generations the three
// members started per op (3 when nobody needed a second attempt that got
// as far as a generation).
func BenchmarkGracefulLeaveRebalance(b *testing.B) {
	for _, strategy := range []string{strategyname.Range, strategyname.RoundRobin} {
		b.Run("strategy="+strategy, func(b *testing.B) { benchGracefulLeave(b, strategy) })
	}
}

func benchGracefulLeave(b *testing.B, strategy string) {
	c := testcluster.Shared(b)
	observer, err := zksession.Dial(context.Background(), zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer observer.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	topic := testcluster.UniqueName("rb-bench")
	err = c.CreateTopic(ctx, topic, benchPartitions, 1)
	cancel()
	if err != nil {
		b.Fatal(err)
	}
	topics := map[string]int{topic: 1}
	group := testcluster.UniqueName("g-bench-" + strategy)
	assignor, err := zkassign.NewAssignor(strategy)
	if err != nil {
		b.Fatal(err)
	}
	seq := 0
	assigned := make(chan struct{}, 1) // any member started a generation
	join := func() *benchMember {
		m := startBenchMember(b, c, group, fmt.Sprintf("%s_m%05d", group, seq), strategy, topics, assigned)
		seq++
		return m
	}
	var members []*benchMember
	for range benchGroupSize {
		members = append(members, join())
	}
	defer func() {
		for _, m := range members {
			m.leave(b)
		}
	}()
	settle(b, observer, group, topic, assignor, members, assigned)

	var (
		took    []time.Duration
		closing time.Duration
		assigns int
	)
	for b.Loop() {
		leaver, rest := members[0], slices.Clone(members[1:])
		want := expectedShares(b, assignor, topic, rest)
		gens := make([]int, len(rest))
		for i, m := range rest {
			gens[i] = m.generations()
		}
		start := time.Now()
		leaver.leave(b)
		closed := time.Since(start)
		if err := waitShares(rest, want, assigned, time.Minute); err != nil {
			b.Fatalf("after %s left: %v", leaver.id, err)
		}
		d := time.Since(start)
		b.StopTimer()
		took = append(took, d)
		closing += closed
		for i, m := range rest {
			assigns += m.generations() - gens[i]
		}
		if err := checkOwners(observer, group, topic, want); err != nil {
			b.Fatal(err)
		}
		members = append(rest, join())
		settle(b, observer, group, topic, assignor, members, assigned)
		b.StartTimer()
	}
	slices.Sort(took)
	n := float64(len(took))
	var total time.Duration
	for _, d := range took {
		total += d
	}
	pct := func(p float64) float64 { return ms(took[min(len(took)-1, int(p*n))]) }
	b.ReportMetric(ms(total)/n, "ms/op")
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.9), "p90-ms")
	b.ReportMetric(ms(took[len(took)-1]), "max-ms")
	b.ReportMetric(ms(closing)/n, "close-ms")
	b.ReportMetric(float64(assigns)/n, "assigns/op")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchMember is a member configured like the connector's, whose handler
// signals every generation it starts.
type benchMember struct {
	*Member
	id      string
	session *zksession.Session
	rec     *recorder
}

// signalingRecorder is a recorder that also signals each Assign on a
// channel of capacity 1, which the members of a group share.
type signalingRecorder struct {
	*recorder
	assigned chan struct{}
}

func (r signalingRecorder) Assign(ctx context.Context, gen *Generation) error {
	err := r.recorder.Assign(ctx, gen)
	select {
	case r.assigned <- struct{}{}:
	default:
	}
	return err
}

func startBenchMember(b *testing.B, c *testcluster.Cluster, group, id, strategy string, topics map[string]int, assigned chan struct{}) *benchMember {
	b.Helper()
	ctx := context.Background()
	s, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: benchSessionTime, ConnectionTimeout: 20 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	a, err := zkassign.NewAssignor(strategy)
	if err != nil {
		b.Fatal(err)
	}
	bm := &benchMember{id: id, session: s, rec: &recorder{}}
	m, err := NewMember(Session(s), MemberConfig{Group: group, ConsumerID: id, Subscription: StaticSubscription(topics), ExcludeInternalTopics: true,
		Assignor: a, MaxRetries: benchMaxRetries, Backoff: benchBackoff, SessionTimeout: benchSessionTime,
		Handler: signalingRecorder{bm.rec, assigned}, Logger: testLogger(),
		OnError: func(err error) { b.Logf("member %s: %v", id, err) }})
	if err != nil {
		b.Fatal(err)
	}
	bm.Member = m
	if err := m.Start(ctx); err != nil {
		b.Fatal(err)
	}
	return bm
}

// leave closes the member and its session, as the connector's Shutdown
// does. It is idempotent.
func (m *benchMember) leave(b *testing.B) {
	if m.session == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		b.Error(err)
	}
	if err := m.session.Close(); err != nil {
		b.Error(err)
	}
	m.session = nil
}

func (m *benchMember) generations() int {
	m.rec.mu.Lock()
	defer m.rec.mu.Unlock()
	return m.rec.gens
}

// expectedShares is what the assignor gives each of members when they
// make up the whole group.
func expectedShares(b *testing.B, a zkassign.Assignor, topic string, members []*benchMember) map[string]map[zkutil.TopicPartition]zkutil.ConsumerThreadID {
	b.Helper()
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.id
	}
	slices.Sort(ids)
	sub := StaticSubscription(map[string]int{topic: 1})
	parts := make([]int32, benchPartitions)
	for i := range parts {
		parts[i] = int32(i)
	}
	actx := zkassign.AssignmentContext{
		ConsumerID:         ids[0],
		ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{},
		PartitionsForTopic: map[string][]int32{topic: parts},
		Consumers:          ids,
	}
	for _, id := range ids {
		threads := sub.ThreadIDs(id, nil, true)
		if id == ids[0] {
			actx.MyTopicThreadIDs = threads
		}
		actx.ConsumersForTopic[topic] = append(actx.ConsumersForTopic[topic], threads[topic]...)
	}
	want, err := a.Assign(actx)
	if err != nil {
		b.Fatal(err)
	}
	return want
}

// waitShares waits until each member's handler holds exactly its share of
// want, checking again whenever a member of the group starts a generation.
func waitShares(members []*benchMember, want map[string]map[zkutil.TopicPartition]zkutil.ConsumerThreadID, assigned <-chan struct{}, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		var pending *benchMember
		for _, m := range members {
			if !maps.Equal(m.rec.snapshot(), want[m.id]) {
				pending = m
				break
			}
		}
		if pending == nil {
			return nil
		}
		select {
		case <-assigned:
		case <-deadline.C:
			return fmt.Errorf("member %s does not hold its share %v: it holds %v", pending.id, want[pending.id], pending.rec.snapshot())
		}
	}
}

// checkOwners compares the owner nodes of the group with want.
func checkOwners(observer *zksession.Session, group, topic string, want map[string]map[zkutil.TopicPartition]zkutil.ConsumerThreadID) error {
	owners, err := ownersOf(context.Background(), observer, group, []string{topic})
	if err != nil {
		return err
	}
	flat := map[zkutil.TopicPartition]string{}
	for _, share := range want {
		for tp, th := range share {
			flat[tp] = th.String()
		}
	}
	if len(flat) != benchPartitions || !maps.Equal(owners, flat) {
		return fmt.Errorf("owner nodes %v, want %v", owners, flat)
	}
	return nil
}

// settle waits until the group of members has converged on its
// assignment, its owner nodes agree, and no member starts another
// generation for 300ms.
func settle(b *testing.B, observer *zksession.Session, group, topic string, a zkassign.Assignor, members []*benchMember, assigned <-chan struct{}) {
	b.Helper()
	want := expectedShares(b, a, topic, members)
	for attempt := 0; ; attempt++ {
		if err := waitShares(members, want, assigned, 90*time.Second); err != nil {
			b.Fatal(err)
		}
		gens := make([]int, len(members))
		for i, m := range members {
			gens[i] = m.generations()
		}
		time.Sleep(300 * time.Millisecond)
		quiet := true
		for i, m := range members {
			quiet = quiet && m.generations() == gens[i]
		}
		if quiet {
			if err := checkOwners(observer, group, topic, want); err != nil {
				b.Fatal(err)
			}
			return
		}
		if attempt == 10 {
			b.Fatal("the group keeps rebalancing")
		}
	}
}
