package connector

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/kafkagroup"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// javaCooperative makes the Java console consumer list Kafka's
// CooperativeStickyAssignor alone (it overrides the range assignor of
// javaProps).
var javaCooperative = javaTools{tool: testcluster.Tool, consume: testcluster.JavaConsoleConsume,
	extra: []string{"--consumer-property", "partition.assignment.strategy=org.apache.kafka.clients.consumer.CooperativeStickyAssignor"}}

// javaRangeThenCooperative is Kafka 3.x's default list, [range,
// cooperative-sticky]: the first step of the rolling upgrade.
var javaRangeThenCooperative = javaTools{tool: testcluster.Tool, consume: testcluster.JavaConsoleConsume,
	extra: []string{"--consumer-property", "partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor,org.apache.kafka.clients.consumer.CooperativeStickyAssignor"}}

// kafkaGeneration returns conn's current Kafka generation, nil if none.
func kafkaGeneration(conn *ConsumerConnector) *kafkagroup.Generation {
	if conn.kafka == nil {
		return nil
	}
	r := conn.kafka.current()
	if r == nil {
		return nil
	}
	return r.member.Generation()
}

// ownerWatch polls the coordinator's view of a group and records every
// moment a partition of topic was assigned to two members at once.
type ownerWatch struct {
	mu       sync.Mutex
	overlaps []string
	polls    int
	stop     func()
}

func watchOwners(t *testing.T, c *testcluster.Cluster, group, topic string) *ownerWatch {
	w := &ownerWatch{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	w.stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(w.stop)
	go func() {
		defer close(done)
		client, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
		if err != nil {
			w.mu.Lock()
			w.overlaps = append(w.overlaps, "no client: "+err.Error())
			w.mu.Unlock()
			return
		}
		defer client.Close()
		for ctx.Err() == nil {
			if b, err := client.Coordinator(group); err == nil {
				if resp, err := b.DescribeGroups(&sarama.DescribeGroupsRequest{Groups: []string{group}}); err == nil && len(resp.Groups) == 1 {
					owners := map[int32][]string{}
					for id, md := range resp.Groups[0].Members {
						if a, err := md.GetMemberAssignment(); err == nil && a != nil {
							for _, p := range a.Topics[topic] {
								owners[p] = append(owners[p], id)
							}
						}
					}
					w.mu.Lock()
					w.polls++
					for p, ids := range owners {
						if len(ids) > 1 {
							w.overlaps = append(w.overlaps, fmt.Sprintf("partition %d: %v", p, ids))
						}
					}
					w.mu.Unlock()
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return w
}

// check stops the watch and requires that no partition ever had two
// owners.
func (w *ownerWatch) check(t *testing.T) {
	t.Helper()
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	t.Logf("the coordinator's assignment polled %d times", w.polls)
	require.Greater(t, w.polls, 10)
	require.Empty(t, w.overlaps, "partitions with two owners at once")
}

// produceAndRead writes n messages from first over every partition and
// waits until zkconsumer members and the Java members together have read
// them all, then for their commits (auto.commit.interval.ms 200 ms).
func produceAndRead(t *testing.T, ctx context.Context, c *testcluster.Cluster, topic string, col *collector, js []*javaMember, first, n int) {
	t.Helper()
	_, err := c.Produce(ctx, topic, n, testcluster.ProduceOptions{Partition: -1, FirstSeq: first})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		rs := col.snapshot()
		for _, j := range js {
			rs = append(rs, j.records(t)...)
		}
		seen := distinct(rs)
		for seq := first; seq < first+n; seq++ {
			if seen[seq] == 0 {
				return false
			}
		}
		return true
	}, 90*time.Second, 100*time.Millisecond, "messages %d..%d never read", first, first+n-1)
	time.Sleep(time.Second)
}

// requireOnce requires that every message 0..n-1 was read exactly once by
// the members together.
func requireOnce(t *testing.T, col *collector, js []*javaMember, n int) {
	t.Helper()
	rs := col.snapshot()
	for _, j := range js {
		rs = append(rs, j.records(t)...)
	}
	seen := distinct(rs)
	for seq := range n {
		require.Equal(t, 1, seen[seq], "message %d read %d times", seq, seen[seq])
	}
}

// TestKafkaCooperativeMixedWithJava shares a cooperative-sticky group
// between zkconsumer members and Kafka 3.9's Java console consumer with
// partition.assignment.strategy=CooperativeStickyAssignor, each side
// leading in turn: a zkconsumer member leads the group when the Java member
// joins (the Java member reads the zkconsumer leader's assignment), the
// Java member leads it when a second zkconsumer member joins (the Java
// leader reads the zkconsumer member's subscription, owned partitions and
// generation, and its cooperative two-phase assignment is followed), then
// the Java member is killed and the zkconsumer member takes everything.
// Every message is read exactly once, each member reads what the
// coordinator assigned it, and the coordinator's assignment, polled all
// along, never gives a partition to two members at once.
func TestKafkaCooperativeMixedWithJava(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 6, 0)
	group := testcluster.UniqueName("g-kcoopjava")
	bootstrap := strings.Join(c.BrokerAddrs(), ",")
	ctx := testwait.Context(t, 6*time.Minute)
	cfg := kafkaConfig(c, group)
	cfg.PartitionAssignmentStrategy = []AssignmentStrategy{StrategyCooperativeSticky}
	col := newCollector()
	w := watchOwners(t, c, group, topic)
	start := func(name string) *ConsumerConnector {
		conn := newConnector(t, cfg)
		streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		col.read(ctx, name, streams[topic][0])
		return conn
	}
	check := func(conn *ConsumerConnector, members int) {
		t.Helper()
		ms := waitGroup(t, c, group, topic, 6, members)
		javaParts, zkParts := splitMembers(t, ms, topic)
		require.NotEmpty(t, javaParts)
		require.Eventually(t, func() bool { return slices.Equal(ownedOf(conn, topic), zkParts) }, 30*time.Second, 50*time.Millisecond,
			"zkconsumer owns what the coordinator assigned it (%v)", zkParts)
	}

	a := start("a")
	produceAndRead(t, ctx, c, topic, col, nil, 0, 60)
	require.True(t, kafkaGeneration(a).Leader)

	// The Java member joins; a leads and hands it a share in two phases.
	j := startJavaMember(t, javaCooperative, bootstrap, topic, group)
	check(a, 2)
	gen := kafkaGeneration(a)
	require.True(t, gen.Leader, "the zkconsumer member leads")
	require.True(t, gen.Cooperative)
	require.Equal(t, StrategyCooperativeSticky.String(), gen.Protocol)
	produceAndRead(t, ctx, c, topic, col, []*javaMember{j}, 60, 60)

	// a leaves: the Java member, alone, leads from now on.
	shutdown(t, a)
	ms := waitGroup(t, c, group, topic, 6, 1)
	require.True(t, strings.HasPrefix(ms[0].id, "java-"))
	produceAndRead(t, ctx, c, topic, col, []*javaMember{j}, 120, 60)

	// b joins: the Java leader assigns, b follows.
	b := start("b")
	check(b, 2)
	gen = kafkaGeneration(b)
	require.False(t, gen.Leader, "the Java member leads")
	require.True(t, gen.Cooperative)
	produceAndRead(t, ctx, c, topic, col, []*javaMember{j}, 180, 60)

	// The Java member crashes; b takes everything after the session
	// timeout and leads.
	j.kill()
	waitGroup(t, c, group, topic, 6, 1)
	require.Eventually(t, func() bool { return len(ownedOf(b, topic)) == 6 }, time.Minute, 50*time.Millisecond)
	require.True(t, kafkaGeneration(b).Leader)
	produceAndRead(t, ctx, c, topic, col, []*javaMember{j}, 240, 60)

	w.check(t)
	requireOnce(t, col, []*javaMember{j}, 300)
	shutdown(t, b)
}

// TestKafkaCooperativeRollingUpgrade runs Kafka's rolling upgrade to the
// cooperative protocol in a group of a zkconsumer member and a Java 3.9
// member: both first list [range, cooperative-sticky] (the group agrees on
// range, both eager); the zkconsumer member restarts listing
// cooperative-sticky alone (the group moves to cooperative-sticky: the
// zkconsumer member is cooperative, the Java member, still listing range,
// eager); then the Java member restarts listing cooperative-sticky alone,
// and the zkconsumer member keeps the partitions it keeps through that
// rebalance (its listener is told to release only those that move). Every
// message is read, exactly once, and no partition ever has two owners in
// the coordinator's assignment.
func TestKafkaCooperativeRollingUpgrade(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 6, 0)
	group := testcluster.UniqueName("g-kupgrade")
	bootstrap := strings.Join(c.BrokerAddrs(), ",")
	ctx := testwait.Context(t, 6*time.Minute)
	col := newCollector()
	w := watchOwners(t, c, group, topic)
	start := func(name, strategy string, opts ...Option) *ConsumerConnector {
		cfg := kafkaConfig(c, group)
		list, err := parseStrategies(strategy)
		require.NoError(t, err)
		cfg.PartitionAssignmentStrategy = list
		conn := newConnector(t, cfg, opts...)
		streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		col.read(ctx, name, streams[topic][0])
		return conn
	}

	// Step 0: everyone lists [range, cooperative-sticky]: range, eager.
	a := start("a", "range,cooperative-sticky")
	j1 := startJavaMember(t, javaRangeThenCooperative, bootstrap, topic, group)
	waitGroup(t, c, group, topic, 6, 2)
	require.Eventually(t, func() bool { g := kafkaGeneration(a); return g != nil && g.Err() == nil && len(ownedOf(a, topic)) == 3 }, time.Minute, 50*time.Millisecond)
	gen := kafkaGeneration(a)
	require.Equal(t, StrategyRange.String(), gen.Protocol)
	require.False(t, gen.Cooperative)
	produceAndRead(t, ctx, c, topic, col, []*javaMember{j1}, 0, 60)

	// Step 1: the zkconsumer member restarts with [cooperative-sticky]:
	// the only assignor all list; the zkconsumer member is cooperative.
	shutdown(t, a)
	waitGroup(t, c, group, topic, 6, 1)
	listener := newPausingListener(0)
	a2 := start("a2", "cooperative-sticky", WithRebalanceListener(listener))
	waitGroup(t, c, group, topic, 6, 2)
	require.Eventually(t, func() bool { return len(ownedOf(a2, topic)) == 3 }, time.Minute, 50*time.Millisecond)
	gen = kafkaGeneration(a2)
	require.Equal(t, StrategyCooperativeSticky.String(), gen.Protocol)
	require.True(t, gen.Cooperative)
	produceAndRead(t, ctx, c, topic, col, []*javaMember{j1}, 60, 60)

	// Step 2: the Java member restarts with [cooperative-sticky]. It is
	// killed (a crash, then a new process): a2 takes its partitions after
	// the session timeout, then gives some up to the new Java member
	// while it keeps the rest flowing.
	before := ownedOf(a2, topic)
	j1.kill()
	waitGroup(t, c, group, topic, 6, 1)
	require.Eventually(t, func() bool { return len(ownedOf(a2, topic)) == 6 }, time.Minute, 50*time.Millisecond)
	produceAndRead(t, ctx, c, topic, col, []*javaMember{j1}, 120, 60)
	listener.mu.Lock()
	releasedBefore := len(listener.released)
	listener.mu.Unlock()
	j2 := startJavaMember(t, javaCooperative, bootstrap, topic, group)
	waitGroup(t, c, group, topic, 6, 2)
	require.Eventually(t, func() bool { return len(ownedOf(a2, topic)) == 3 }, time.Minute, 50*time.Millisecond)
	after := ownedOf(a2, topic)
	listener.mu.Lock()
	released := slices.Clone(listener.released[releasedBefore:])
	listener.mu.Unlock()
	require.Len(t, released, 1, "one release, of the partitions that move: %v", released)
	var gaveUp []int32
	for _, p := range []int32{0, 1, 2, 3, 4, 5} {
		if !slices.Contains(after, p) {
			gaveUp = append(gaveUp, p)
		}
	}
	require.Equal(t, gaveUp, released[0][topic], "a2 was told to release exactly what moved (before the crash it owned %v, now %v)", before, after)
	produceAndRead(t, ctx, c, topic, col, []*javaMember{j1, j2}, 180, 60)

	w.check(t)
	requireOnce(t, col, []*javaMember{j1, j2}, 240)
	shutdown(t, a2)
}
