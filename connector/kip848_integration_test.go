package connector

import (
	"cmp"
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/grouplease"
	"github.com/zkconsumer/zkconsumer/internal/kafkagroup"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// consumerProtocolConfig is kafkaConfig with group.protocol=consumer.
// session.timeout.ms is the broker's (group.consumer.session.timeout.ms,
// 45 s by default): with this protocol it is only what the member assumes
// for its lease, which must outlast the broker's heartbeat interval (5 s).
func consumerProtocolConfig(c *testcluster.Cluster, group string) Config {
	cfg := kafkaConfig(c, group)
	cfg.GroupProtocol = GroupProtocolConsumer
	cfg.SessionTimeout = 45 * time.Second
	return cfg
}

// consumerGroupMember is a member of a consumer-protocol group as
// ConsumerGroupDescribe shows it.
type consumerGroupMember struct {
	id, clientID       string
	epoch              int32
	assigned, targeted map[string][]int32
}

// describeConsumerGroup returns a consumer-protocol group's state and
// members (ConsumerGroupDescribe, KIP-848). A failed request (a broker or
// coordinator that is down) is returned as the state "error: ...".
func describeConsumerGroup(t *testing.T, c *testcluster.Cluster, group string) (string, []consumerGroupMember) {
	t.Helper()
	client, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
	if err != nil {
		return "error: " + err.Error(), nil
	}
	defer client.Close()
	b, err := client.Coordinator(group)
	if err != nil {
		return "error: " + err.Error(), nil
	}
	resp, err := b.ConsumerGroupDescribe(&sarama.ConsumerGroupDescribeRequest{GroupIDs: []string{group}})
	if err != nil {
		return "error: " + err.Error(), nil
	}
	require.Len(t, resp.Groups, 1)
	g := resp.Groups[0]
	if g.ErrorCode != sarama.ErrNoError {
		return g.ErrorCode.Error(), nil
	}
	names := func(a sarama.ConsumerGroupAssignment) map[string][]int32 {
		out := map[string][]int32{}
		for _, tp := range a.TopicPartitions {
			ps := slices.Clone(tp.Partitions)
			slices.Sort(ps)
			out[tp.TopicName] = ps
		}
		return out
	}
	var out []consumerGroupMember
	for _, m := range g.Members {
		out = append(out, consumerGroupMember{id: m.MemberID, clientID: m.ClientID, epoch: m.MemberEpoch,
			assigned: names(m.Assignment), targeted: names(m.TargetAssignment)})
	}
	slices.SortFunc(out, func(a, b consumerGroupMember) int { return strings.Compare(a.id, b.id) })
	return g.GroupState, out
}

// waitConsumerGroup waits until the consumer-protocol group is stable with
// members members, each owning its target, that together own each of
// topic's partitions exactly once.
func waitConsumerGroup(t *testing.T, c *testcluster.Cluster, group, topic string, partitions int32, members int) []consumerGroupMember {
	t.Helper()
	var last []consumerGroupMember
	var lastState string
	require.Eventually(t, func() bool {
		state, ms := describeConsumerGroup(t, c, group)
		last, lastState = ms, state
		if state != "Stable" || len(ms) != members {
			return false
		}
		seen := map[int32]int{}
		for _, m := range ms {
			if !mapsEqual(m.assigned, m.targeted) {
				return false
			}
			for _, p := range m.assigned[topic] {
				seen[p]++
			}
		}
		for p := range partitions {
			if seen[p] != 1 {
				return false
			}
		}
		return len(seen) == int(partitions)
	}, 2*time.Minute, 200*time.Millisecond, "group %s never settled with %d members over %d partitions (last: %s %+v)", group, members, partitions, lastState, last)
	return last
}

// topicEnds returns each partition's end offset.
func topicEnds(t *testing.T, c *testcluster.Cluster, topic string) map[int32]int64 {
	t.Helper()
	ends, err := testcluster.TopicEnds(c.BrokerAddrs(), topic)
	require.NoError(t, err)
	out := map[int32]int64{}
	for p, e := range ends {
		out[int32(p)] = e
	}
	return out
}

func mapsEqual(a, b map[string][]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestConsumerProtocolConsumesAndCommits: one member with
// group.protocol=consumer on Kafka 4.x joins a consumer-protocol group
// (the broker lists it, with this member owning every partition), reads
// every message, commits with OffsetCommit v9 as it goes (the broker
// refuses a consumer-protocol member's classic commits), and on Shutdown
// commits the end of every partition and leaves the group (epoch -1:
// the group is empty at once). A second member of the same group then
// resumes from those commits and reads only what came after.
func TestConsumerProtocolConsumesAndCommits(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedKRaft(t)
	topic := newTopic(t, c, 4, 200)
	group := testcluster.UniqueName("g-kip848")
	ctx := testwait.Context(t, 3*time.Minute)
	a := newConnector(t, consumerProtocolConfig(c, group))
	streams, err := a.CreateMessageStreams(ctx, map[string]int{topic: 2})
	require.NoError(t, err)
	col := newCollector()
	for i, s := range streams[topic] {
		col.read(ctx, "a"+string(rune('0'+i)), s)
	}
	col.waitAll(t, 0, 200, time.Minute)
	ms := waitConsumerGroup(t, c, group, topic, 4, 1)
	require.Equal(t, []int32{0, 1, 2, 3}, ms[0].assigned[topic])
	require.Positive(t, ms[0].epoch)

	// Automatic commits reach the coordinator while the member runs.
	ends := topicEnds(t, c, topic)
	require.Eventually(t, func() bool {
		got := kafkaCommitted(t, c, group, topic, 4)
		for p, end := range ends {
			if got[p] != end {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond, "automatic commits reach the coordinator")

	_, err = c.Produce(ctx, topic, 40, testcluster.ProduceOptions{Partition: -1, FirstSeq: 200})
	require.NoError(t, err)
	col.waitAll(t, 200, 40, time.Minute)
	start := time.Now()
	shutdown(t, a)
	require.Eventually(t, func() bool {
		state, ms := describeConsumerGroup(t, c, group)
		return state == "Empty" && len(ms) == 0
	}, 10*time.Second, 100*time.Millisecond, "Shutdown leaves the group at once")
	t.Logf("left the group %v after Shutdown began", time.Since(start))
	ends = topicEnds(t, c, topic)
	require.Equal(t, ends, kafkaCommitted(t, c, group, topic, 4), "Shutdown commits what was consumed")

	_, err = c.Produce(ctx, topic, 20, testcluster.ProduceOptions{Partition: -1, FirstSeq: 240})
	require.NoError(t, err)
	b := newConnector(t, consumerProtocolConfig(c, group))
	sb, err := b.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	colB := newCollector()
	colB.read(ctx, "b", sb[topic][0])
	rs := colB.waitAll(t, 240, 20, time.Minute)
	for _, r := range rs {
		require.GreaterOrEqual(t, r.Seq, 240, "the second member resumes from the first's commits")
	}
	shutdown(t, b)
}

// releaseLog records what a member's listener is told to release and to
// start.
type releaseLog struct {
	mu                sync.Mutex
	released, started map[int32]int // partition -> times
	lost              int           // releases with lost=true
}

func (l *releaseLog) listener(topic string) RebalanceListener {
	return RebalanceListenerFuncs{
		Releasing: func(_ context.Context, _ *ConsumerConnector, released map[string][]int32, lost bool) {
			l.mu.Lock()
			defer l.mu.Unlock()
			if lost {
				l.lost++
			}
			if l.released == nil {
				l.released = map[int32]int{}
			}
			for _, p := range released[topic] {
				l.released[p]++
			}
		},
		Starting: func(_ context.Context, _ *ConsumerConnector, gained map[string][]int32) {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.started == nil {
				l.started = map[int32]int{}
			}
			for _, p := range gained[topic] {
				l.started[p]++
			}
		},
	}
}

func (l *releaseLog) count(p int32) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.released[p]
}

func (l *releaseLog) losses() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

func (l *releaseLog) starts(p int32) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.started[p]
}

// produceSteadily writes, with one long-lived producer, a message to every
// partition of topic every period, sequence numbers from first on, until
// stop is closed; it returns the number written.
func produceSteadily(t *testing.T, ctx context.Context, c *testcluster.Cluster, topic string, partitions int32, first int, period time.Duration, stop <-chan struct{}) <-chan int {
	cfg := c.ClientConfig()
	cfg.Version = c.BrokerSaramaVersion()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	producer, err := sarama.NewSyncProducer(c.BrokerAddrs(), cfg)
	require.NoError(t, err)
	out := make(chan int, 1)
	go func() {
		defer producer.Close()
		seq := first
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				out <- seq - first
				return
			case <-ctx.Done():
				out <- seq - first
				return
			case <-tick.C:
			}
			msgs := make([]*sarama.ProducerMessage, 0, partitions)
			for p := range partitions {
				msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: p, Value: sarama.ByteEncoder(testcluster.MessageValue(seq, 0))})
				seq++
			}
			if err := producer.SendMessages(msgs); err != nil {
				t.Errorf("produce: %v", err)
				out <- seq - first - int(partitions)
				return
			}
		}
	}()
	return out
}

// longestGap returns the longest time between two consecutive deliveries
// of partition p by consumer name (any of its streams: name plus a digit)
// within [from, to] (from and to count as deliveries).
func longestGap(rs []record, name string, p int32, from, to time.Time) time.Duration {
	var ats []time.Time
	for _, r := range rs {
		if strings.TrimRight(r.Consumer, "0123456789") == name && r.Partition == p && r.At.After(from) && r.At.Before(to) {
			ats = append(ats, r.At)
		}
	}
	slices.SortFunc(ats, func(a, b time.Time) int { return a.Compare(b) })
	prev, gap := from, time.Duration(0)
	for _, at := range append(ats, to) {
		gap = max(gap, at.Sub(prev))
		prev = at
	}
	return gap
}

// checkOneOwnerAtATime fails if two consumers delivered messages of one
// partition at the same time: in offset order, wherever the consumer
// changes, the previous consumer's delivery came before the next one's,
// so each hand-over happened before the new owner's first delivery.
func checkOneOwnerAtATime(t *testing.T, rs []record) {
	t.Helper()
	byPart := map[int32][]record{}
	for _, r := range rs {
		byPart[r.Partition] = append(byPart[r.Partition], r)
	}
	for p, prs := range byPart {
		slices.SortStableFunc(prs, func(a, b record) int { return cmp.Compare(a.Offset, b.Offset) })
		for i := 1; i < len(prs); i++ {
			prev, cur := prs[i-1], prs[i]
			if prev.Consumer != cur.Consumer {
				require.True(t, prev.At.Before(cur.At), "partition %d: %s delivered offset %d at %s, after %s delivered offset %d at %s",
					p, prev.Consumer, prev.Offset, prev.At, cur.Consumer, cur.Offset, cur.At)
			}
		}
	}
}

// TestConsumerProtocolTwoMembers: two zkconsumer members share a
// consumer-protocol group on Kafka 4.x while messages keep coming. When
// the second joins, the broker moves half of the partitions: the first
// member's listener is told to release exactly those, the partitions it
// keeps keep delivering without a pause (they are never stopped), and
// each partition has one owner at a time (the first hands a partition
// over, committed, before the second reads it, so nothing is read twice).
// When the second leaves, the first takes everything back without
// releasing anything. Every message is read exactly once.
func TestConsumerProtocolTwoMembers(t *testing.T) {
	oneAtATime(t)
	c := testcluster.SharedKRaft(t)
	const parts = 6
	topic := newTopic(t, c, parts, 60)
	group := testcluster.UniqueName("g-kip848-two")
	ctx := testwait.Context(t, 5*time.Minute)
	col := newCollector()
	var relA, relB releaseLog
	a := newConnector(t, consumerProtocolConfig(c, group), WithRebalanceListener(relA.listener(topic)))
	sa, err := a.CreateMessageStreams(ctx, map[string]int{topic: 2})
	require.NoError(t, err)
	for i, s := range sa[topic] {
		col.read(ctx, "a"+strconv.Itoa(i), s)
	}
	col.waitAll(t, 0, 60, time.Minute)
	waitConsumerGroup(t, c, group, topic, parts, 1)

	stop := make(chan struct{})
	written := produceSteadily(t, ctx, c, topic, parts, 60, 100*time.Millisecond, stop)
	time.Sleep(time.Second)
	joinStart := time.Now()
	b := newConnector(t, consumerProtocolConfig(c, group), WithRebalanceListener(relB.listener(topic)))
	sb, err := b.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col.read(ctx, "b", sb[topic][0])
	ms := waitConsumerGroup(t, c, group, topic, parts, 2)
	joinEnd := time.Now()
	var kept, moved []int32
	require.Eventually(t, func() bool {
		kept, moved = nil, nil
		for _, m := range ms {
			if owned := m.assigned[topic]; slices.Equal(owned, ownedOf(b, topic)) {
				moved = owned
			} else {
				kept = owned
			}
		}
		return moved != nil
	}, 30*time.Second, 50*time.Millisecond, "the second member owns what the broker assigned it: %+v", ms)
	require.Len(t, moved, parts/2, "the uniform assignor balances two members: %+v", ms)
	require.Len(t, kept, parts/2)
	require.Eventually(t, func() bool { return slices.Equal(ownedOf(a, topic), kept) }, 10*time.Second, 50*time.Millisecond)
	time.Sleep(2 * time.Second) // deliveries after the join
	for _, p := range kept {
		require.Zero(t, relA.count(p), "the first member never releases partition %d, which it keeps", p)
		require.Equal(t, 1, relA.starts(p), "the first member started partition %d once, when it joined", p)
	}
	for _, p := range moved {
		require.Equal(t, 1, relA.count(p), "the first member releases partition %d once, as it moves", p)
		require.Equal(t, 1, relB.starts(p), "the second member starts partition %d once", p)
	}
	rs := col.snapshot()
	for _, p := range kept {
		gap := longestGap(rs, "a", p, joinStart, joinEnd.Add(time.Second))
		t.Logf("partition %d (kept): longest pause in deliveries during the join: %v", p, gap)
		require.Less(t, gap, 2*time.Second, "kept partition %d delivers throughout the join", p)
	}

	// The second member leaves; the first takes all back, releasing nothing.
	leaveStart := time.Now()
	shutdown(t, b)
	waitConsumerGroup(t, c, group, topic, parts, 1)
	require.Eventually(t, func() bool { return len(ownedOf(a, topic)) == parts }, 30*time.Second, 50*time.Millisecond)
	leaveEnd := time.Now()
	time.Sleep(2 * time.Second)
	rs = col.snapshot()
	for _, p := range kept {
		require.Zero(t, relA.count(p), "partition %d stays with the first member through the leave", p)
		gap := longestGap(rs, "a", p, leaveStart, leaveEnd.Add(time.Second))
		require.Less(t, gap, 2*time.Second, "kept partition %d delivers throughout the leave", p)
	}
	for _, p := range moved {
		require.Equal(t, 1, relB.count(p), "the second member releases partition %d on Shutdown", p)
		require.Equal(t, 2, relA.starts(p), "the first member starts partition %d again, alone", p)
	}
	for _, p := range kept {
		require.Equal(t, 1, relA.starts(p), "partition %d is not started again", p)
	}
	close(stop)
	n := <-written
	rs = col.waitAll(t, 0, 60+n, time.Minute)
	canonical := make([]record, 0, len(rs))
	for _, r := range rs {
		r.Consumer = strings.TrimRight(r.Consumer, "0123456789") // a's two streams are one member
		canonical = append(canonical, r)
	}
	perOwner := map[string]int{}
	for _, r := range canonical {
		perOwner[r.Consumer+"/"+strconv.Itoa(int(r.Partition))]++
	}
	t.Logf("deliveries per member/partition: %v", perOwner)
	checkOneOwnerAtATime(t, canonical)
	again := 0
	for _, k := range distinct(rs) {
		again += k - 1
	}
	require.Zero(t, again, "orderly hand-overs (commit, then acknowledge) redeliver nothing")
	shutdown(t, a)
}

// startJava848Member starts Kafka 4.x's Java console consumer as a member
// of group with group.protocol=consumer (it refuses the classic
// protocol's session.timeout.ms, heartbeat.interval.ms and
// partition.assignment.strategy with it). extra are more arguments of
// the console consumer.
func startJava848Member(t *testing.T, bootstrap, topic, group string, extra ...string) *javaMember {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd, err := testcluster.Tool4(ctx, "org.apache.kafka.tools.consumer.ConsoleConsumer", append([]string{
		"--bootstrap-server", bootstrap, "--topic", topic, "--group", group,
		"--property", "print.partition=true", "--property", "print.offset=true",
		"--consumer-property", "group.protocol=consumer",
		"--consumer-property", "metadata.max.age.ms=1000",
		"--consumer-property", "auto.commit.interval.ms=200",
		"--consumer-property", "client.id=java-" + group,
		"--from-beginning"}, extra...)...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return runJavaMember(t, cmd, cancel)
}

// stop ends the Java consumer with SIGTERM, on which it commits and
// leaves the group, and waits for it.
func (j *javaMember) stop(t *testing.T) {
	t.Helper()
	_ = syscall.Kill(-j.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-j.waited:
	case <-time.After(time.Minute):
		t.Fatal("the Java console consumer did not stop on SIGTERM")
	}
}

// TestConsumerProtocolMixedWithJava shares one consumer-protocol group
// between a zkconsumer member and Kafka 4.x's Java console consumer
// (group.protocol=consumer): the Java consumer joins and the broker gives
// it part of the partitions, which zkconsumer gives up (committed) and
// Java resumes from; each side then reads only its own partitions, one
// owner per partition at a time; the Java consumer leaves (SIGTERM:
// commit, leave) and zkconsumer resumes its partitions from Java's
// commits. Every message is read exactly once.
func TestConsumerProtocolMixedWithJava(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedKRaft(t)
	group := testcluster.UniqueName("g-kip848-java")
	mixedWithJava848(t, c, consumerProtocolConfig(c, group), strings.Join(c.BrokerAddrs(), ","))
}

// mixedWithJava848 is TestConsumerProtocolMixedWithJava's exchange
// between a zkconsumer member configured by cfg (its group, brokers and
// security) and a Java member that reaches the cluster at bootstrap with
// the extra arguments javaArgs.
func mixedWithJava848(t *testing.T, c *testcluster.Cluster, cfg Config, bootstrap string, javaArgs ...string) {
	t.Helper()
	const parts = 4
	topic := newTopic(t, c, parts, 40)
	group := cfg.GroupID
	ctx := testwait.Context(t, 5*time.Minute)
	col := newCollector()
	a := newConnector(t, cfg)
	streams, err := a.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col.read(ctx, "zk", streams[topic][0])
	col.waitAll(t, 0, 40, time.Minute)
	waitConsumerGroup(t, c, group, topic, parts, 1)

	j := startJava848Member(t, bootstrap, topic, group, javaArgs...)
	ms := waitConsumerGroup(t, c, group, topic, parts, 2)
	var javaParts, zkParts []int32
	for _, m := range ms {
		if strings.HasPrefix(m.clientID, "java-") {
			javaParts = m.assigned[topic]
		} else {
			zkParts = m.assigned[topic]
		}
	}
	require.Len(t, javaParts, parts/2, "the broker gives the Java member half: %+v", ms)
	require.Eventually(t, func() bool { return slices.Equal(ownedOf(a, topic), zkParts) }, 30*time.Second, 50*time.Millisecond,
		"zkconsumer owns what the broker assigned it")
	produced, err := c.Produce(ctx, topic, 80, testcluster.ProduceOptions{Partition: -1, FirstSeq: 40})
	require.NoError(t, err)
	want := 0
	for _, p := range javaParts {
		want += len(produced.Offsets[p])
	}
	require.Eventually(t, func() bool { return j.count(t, 40) >= want }, 2*time.Minute, 100*time.Millisecond, "the Java consumer reads its partitions")
	for _, r := range j.records(t) {
		require.Contains(t, javaParts, r.Partition, "Java read a partition it does not own (seq %d)", r.Seq)
	}
	waitBoth(t, col, j, 0, 120)
	for _, r := range col.snapshot() {
		if r.Seq >= 40 {
			require.Contains(t, zkParts, r.Partition, "zkconsumer read a partition Java owns (seq %d)", r.Seq)
		}
	}

	// Java leaves (commit, then epoch -1); zkconsumer resumes its
	// partitions from Java's commits.
	j.stop(t)
	waitConsumerGroup(t, c, group, topic, parts, 1)
	_, err = c.Produce(ctx, topic, 40, testcluster.ProduceOptions{Partition: -1, FirstSeq: 120})
	require.NoError(t, err)
	seen := waitBoth(t, col, j, 0, 160)
	for seq := range 160 {
		require.Equal(t, 1, seen[seq], "message %d read %d times across orderly hand-overs", seq, seen[seq])
	}
	shutdown(t, a)
}

// TestConsumerProtocolNeedsKafka4: group.protocol=consumer against a
// Kafka 3.9 broker, which lacks ConsumerGroupHeartbeat, fails
// CreateMessageStreams at once with a fatal error that names the key and
// the way out, rather than retrying forever.
func TestConsumerProtocolNeedsKafka4(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 2, 1)
	ctx := testwait.Context(t, time.Minute)
	a := newConnector(t, consumerProtocolConfig(c, testcluster.UniqueName("g-kip848-39")))
	start := time.Now()
	_, err := a.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.ErrorIs(t, err, ErrGroupFatal)
	require.ErrorIs(t, err, kafkagroup.ErrUnsupported)
	require.ErrorContains(t, err, "group.protocol=consumer")
	require.ErrorContains(t, err, "group.protocol=classic")
	require.Less(t, time.Since(start), 30*time.Second)
	t.Logf("error: %v", err)
}

// proxiedDialer sends the connections to one broker through a proxy.
type proxiedDialer struct {
	broker string
	proxy  *testcluster.Proxy
}

func (d proxiedDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if addr == d.broker {
		addr = d.proxy.Addr()
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

// TestConsumerProtocolFencedMemberRejoins: a member cut off from the
// broker stops handing out messages once its lease lapses; the broker
// fences it after its session timeout and gives its partitions to the
// other member, which reads everything produced meanwhile. The cut-off
// member, whose heartbeats went unanswered for the session timeout,
// drops its partitions without committing (the listener is told
// lost=true, Errors gets ErrMembershipLost); when the network heals it
// joins again with epoch 0 and gets its share back.
func TestConsumerProtocolFencedMemberRejoins(t *testing.T) {
	t.Parallel()
	c := testcluster.Private(t, testcluster.Options{KRaft: true, BrokerProperties: map[string]string{
		"group.consumer.min.session.timeout.ms":    "6000",
		"group.consumer.session.timeout.ms":        "6000",
		"group.consumer.min.heartbeat.interval.ms": "500",
		"group.consumer.heartbeat.interval.ms":     "500",
	}})
	const parts = 4
	topic := newTopic(t, c, parts, 40)
	group := testcluster.UniqueName("g-kip848-fence")
	ctx := testwait.Context(t, 5*time.Minute)
	broker := c.BrokerAddrs()[0]
	proxy, err := testcluster.NewProxy(broker)
	require.NoError(t, err)
	defer proxy.Close()
	cfg := consumerProtocolConfig(c, group)
	cfg.SessionTimeout = 6 * time.Second // the broker's, as set above
	cfg.SocketTimeout = 2 * time.Second
	col := newCollector()
	var relA releaseLog
	a := newConnector(t, cfg, WithDialer(proxiedDialer{broker: broker, proxy: proxy}), WithRebalanceListener(relA.listener(topic)))
	sa, err := a.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col.read(ctx, "a", sa[topic][0])
	b := newConnector(t, cfg)
	sb, err := b.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col.read(ctx, "b", sb[topic][0])
	waitConsumerGroup(t, c, group, topic, parts, 2)
	col.waitAll(t, 0, 40, time.Minute)

	proxy.SetMode(testcluster.Blackhole)
	cutAt := time.Now()
	// The broker fences the silent member after its session timeout and
	// gives everything to the other.
	waitConsumerGroup(t, c, group, topic, parts, 1)
	_, err = c.Produce(ctx, topic, 40, testcluster.ProduceOptions{Partition: -1, FirstSeq: 40})
	require.NoError(t, err)
	col.waitAll(t, 40, 40, time.Minute)
	require.Eventually(t, func() bool { return relA.losses() > 0 }, 30*time.Second, 50*time.Millisecond,
		"the cut-off member gives its partitions up as lost")
	healAt := time.Now()
	leaseEnd := cutAt.Add(time.Duration(float64(cfg.SessionTimeout) * grouplease.Fraction))
	for _, r := range col.snapshot() {
		if r.Consumer == "a" {
			require.False(t, r.At.After(leaseEnd), "the cut-off member handed out seq %d at %s, after its lease ended at %s", r.Seq, r.At, leaseEnd)
		}
	}
	proxy.SetMode(testcluster.Forward)

	// Healed: the member joins again with epoch 0 and gets its share.
	ms := waitConsumerGroup(t, c, group, topic, parts, 2)
	t.Logf("rejoined %v after the heal: %+v", time.Since(healAt), ms)
	_, err = c.Produce(ctx, topic, 40, testcluster.ProduceOptions{Partition: -1, FirstSeq: 80})
	require.NoError(t, err)
	col.waitAll(t, 80, 40, time.Minute)
	require.Eventually(t, func() bool { return len(ownedOf(a, topic)) == parts/2 }, 30*time.Second, 50*time.Millisecond)
	var errs []error
	for len(a.Errors()) > 0 {
		errs = append(errs, <-a.Errors())
	}
	lost := false
	for _, err := range errs {
		lost = lost || errors.Is(err, ErrMembershipLost)
	}
	require.True(t, lost, "the fenced member reports ErrMembershipLost: %v", errs)
	shutdown(t, a)
	shutdown(t, b)
}

// TestConsumerProtocolCoordinatorMove: the broker coordinating a
// consumer-protocol group is killed. The member finds the new coordinator
// (its heartbeats and commits fail over: the connection fails, then
// NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE until __consumer_offsets
// has a new leader), stays in the group with its partitions (no
// ErrMembershipLost, nothing released), keeps reading, and its commit on
// Shutdown reaches the new coordinator. A private KRaft cluster of 3 nodes
// (node 0 the controller), __consumer_offsets replicated three times, the
// topic on the brokers that stay up.
func TestConsumerProtocolCoordinatorMove(t *testing.T) {
	t.Parallel()
	c := testcluster.Private(t, testcluster.Options{KRaft: true, Brokers: 3, Controllers: 1, BrokerProperties: map[string]string{
		"offsets.topic.replication.factor":         "3",
		"group.consumer.min.session.timeout.ms":    "6000",
		"group.consumer.session.timeout.ms":        "30000",
		"group.consumer.min.heartbeat.interval.ms": "500",
		"group.consumer.heartbeat.interval.ms":     "500",
	}})
	ctx := testwait.Context(t, 6*time.Minute)
	const parts = 4
	group, coord := groupCoordinatedByAnotherBroker(t, c, "g-kip848-move", map[int32]bool{0: true})
	var survivors []int32
	for id := range int32(len(c.BrokerAddrs())) {
		if id != coord {
			survivors = append(survivors, id)
		}
	}
	admin, err := sarama.NewClusterAdmin(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer admin.Close()
	topic, ends := replicatedTopic(t, c, admin, parts, survivors, 100)
	cfg := consumerProtocolConfig(c, group)
	cfg.SessionTimeout = 30 * time.Second // the broker's, as set above
	cfg.SocketTimeout = 3 * time.Second
	var rel releaseLog
	a := newConnector(t, cfg, WithRebalanceListener(rel.listener(topic)))
	col := readAllConsumed(t, ctx, a, topic, ends)

	require.NoError(t, c.KillBroker(int(coord)))
	killedAt := time.Now()
	produced, err := c.Produce(ctx, topic, 60, testcluster.ProduceOptions{Partition: -1, FirstSeq: 100})
	require.NoError(t, err)
	for p, offs := range produced.Offsets {
		ends[p] = offs[len(offs)-1] + 1
	}
	waitConsumed(t, a, topic, ends)
	// The group's new coordinator knows the member, with all partitions.
	ms := waitConsumerGroup(t, c, group, topic, parts, 1)
	t.Logf("the new coordinator lists the member %v after the kill: %+v", time.Since(killedAt).Round(time.Millisecond), ms)
	// A heartbeat reached the new coordinator (the member epoch it
	// answered is what the member holds).
	for p := range int32(parts) {
		require.Zero(t, rel.count(p), "partition %d was never released", p)
	}
	select {
	case err := <-a.Errors():
		require.NotErrorIs(t, err, ErrMembershipLost)
	default:
	}
	shutdown(t, a)
	require.Equal(t, ends, committedOffsets(t, c, group, topic, parts), "the commit on Shutdown reached the new coordinator")
	for seq, n := range distinct(col.snapshot()) {
		require.Equal(t, 1, n, "message %d read twice", seq)
	}
}

// TestConsumerProtocolStaticMember: a static member (group.instance.id)
// leaves on Shutdown with epoch -2, so the broker keeps its partitions for
// it instead of giving them to the other member; an instance with the same
// id started again gets the same partitions back, from the commits of the
// first, while the other member never releases or starts anything.
func TestConsumerProtocolStaticMember(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedKRaft(t)
	const parts = 4
	topic := newTopic(t, c, parts, 40)
	group := testcluster.UniqueName("g-kip848-static")
	ctx := testwait.Context(t, 3*time.Minute)
	col := newCollector()
	static := consumerProtocolConfig(c, group)
	static.GroupInstanceID = "static-1"
	a := newConnector(t, static)
	sa, err := a.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col.read(ctx, "a", sa[topic][0])
	var relB releaseLog
	b := newConnector(t, consumerProtocolConfig(c, group), WithRebalanceListener(relB.listener(topic)))
	sb, err := b.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col.read(ctx, "b", sb[topic][0])
	waitConsumerGroup(t, c, group, topic, parts, 2)
	col.waitAll(t, 0, 40, time.Minute)
	require.Eventually(t, func() bool { return len(ownedOf(a, topic)) == parts/2 && len(ownedOf(b, topic)) == parts/2 },
		30*time.Second, 50*time.Millisecond)
	aParts, bParts := ownedOf(a, topic), ownedOf(b, topic)
	startsB := map[int32]int{}
	for _, p := range bParts {
		startsB[p] = relB.starts(p)
	}

	shutdown(t, a)
	// The broker keeps the static member's partitions: the other member
	// takes nothing over, also after its next heartbeats (the broker's
	// interval is 5 s).
	time.Sleep(7 * time.Second)
	require.Equal(t, bParts, ownedOf(b, topic))
	_, members := describeConsumerGroup(t, c, group)
	require.Len(t, members, 2, "the static member is kept in the group after leaving with epoch -2")

	_, err = c.Produce(ctx, topic, 40, testcluster.ProduceOptions{Partition: -1, FirstSeq: 40})
	require.NoError(t, err)
	a2 := newConnector(t, static)
	sa2, err := a2.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col.read(ctx, "a2", sa2[topic][0])
	require.Eventually(t, func() bool { return slices.Equal(ownedOf(a2, topic), aParts) }, 30*time.Second, 50*time.Millisecond,
		"the restarted instance gets the same partitions back")
	rs := col.waitAll(t, 40, 40, time.Minute)
	for seq, n := range distinct(rs) {
		require.Equal(t, 1, n, "message %d read %d times", seq, n)
	}
	for p := range int32(parts) {
		require.Zero(t, relB.count(p), "the other member released partition %d", p)
		require.Equal(t, startsB[p], relB.starts(p), "the other member started partition %d again", p)
	}

	// A third instance with the same id while the second lives is refused
	// (UNRELEASED_INSTANCE_ID) and keeps trying, until its context ends;
	// the live one keeps its partitions.
	a3 := newConnector(t, static)
	jctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	_, err = a3.CreateMessageStreams(jctx, map[string]int{topic: 1})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "UNRELEASED_INSTANCE_ID")
	require.Equal(t, aParts, ownedOf(a2, topic))
	shutdown(t, a3)
	shutdown(t, a2)
	shutdown(t, b)
}

// TestConsumerProtocolPartitionsAdded: partitions added to a subscribed
// topic are assigned by the broker on its own; the member starts them
// alone (its listener releases nothing) and reads them.
func TestConsumerProtocolPartitionsAdded(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedKRaft(t)
	topic := newTopic(t, c, 2, 20)
	group := testcluster.UniqueName("g-kip848-grow")
	ctx := testwait.Context(t, 3*time.Minute)
	var rel releaseLog
	a := newConnector(t, consumerProtocolConfig(c, group), WithRebalanceListener(rel.listener(topic)))
	sa, err := a.CreateMessageStreams(ctx, map[string]int{topic: 2})
	require.NoError(t, err)
	col := newCollector()
	for i, s := range sa[topic] {
		col.read(ctx, "a"+strconv.Itoa(i), s)
	}
	col.waitAll(t, 0, 20, time.Minute)
	require.NoError(t, c.AddPartitions(ctx, topic, 5))
	waitConsumerGroup(t, c, group, topic, 5, 1)
	_, err = c.Produce(ctx, topic, 50, testcluster.ProduceOptions{Partition: -1, FirstSeq: 20})
	require.NoError(t, err)
	rs := col.waitAll(t, 20, 50, time.Minute)
	for p := range int32(5) {
		require.Zero(t, rel.count(p), "partition %d released", p)
		require.Equal(t, 1, rel.starts(p), "partition %d started once", p)
	}
	for seq, n := range distinct(rs) {
		require.Equal(t, 1, n, "message %d read %d times", seq, n)
	}
	shutdown(t, a)
}
