package connector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// BenchmarkRebalanceLatency measures, end to end and the same way for
// every client, how long a group of four members on a 32-partition topic
// (range assignor, one stream or consumer each) takes to consume every
// partition again after its oldest member leaves gracefully:
//
//   - zkconsumer in ZooKeeper mode (DefaultConfig: rebalance.backoff.ms
//     2000, rebalance.max.retries 4, zookeeper.session.timeout.ms 6000);
//   - zkconsumer in Kafka mode, on Kafka 3.9 (ZooKeeper-mode broker) and on
//     Kafka 4.x in KRaft mode;
//   - Kafka's Java consumer: four kafka-console-consumer JVMs
//     (org.apache.kafka.tools.consumer.ConsoleConsumer), 3.9's on Kafka 3.9
//     and 4.x's with group.protocol=classic on Kafka 4.x; the leaver gets
//     SIGTERM, so it commits and sends LeaveGroup.
//
// The Kafka-coordinated runs use heartbeat.interval.ms 300 with
// session.timeout.ms 6000 (hb=300ms), and the Java defaults,
// heartbeat.interval.ms 3000 with session.timeout.ms 45000 (hb=3s). The
// connector's members are in this process; the Java members are
// processes whose standard output is read line by line.
//
// A producer writes one message to every partition every tick (10 ms,
// ZKCONSUMER_BENCH_TICK), its value the send time in Unix nanoseconds.
// Every delivery is recorded with the time this process saw it (a
// stream's Next returned it, or its line arrived from the JVM's standard
// output). An op starts (t0) when the leave starts: Shutdown is called,
// or SIGTERM is sent. It ends at the latest, over the 32 partitions, of
// the first delivery by the partition's new owner of a message sent at or
// after t0. The new owner is the one remaining member that delivers the
// partition once the group has settled: for one second, every partition's
// messages come from exactly one of the remaining members, and each of
// them delivers some. For a partition that stays with its owner, that
// first delivery may come before the owner has rebalanced; the figure is
// set by the partitions that move, which nobody delivers until the new
// generation starts. A moved partition's delivery waits for the next tick
// at most when its backlog is empty.
//
// Outside the timer a new member joins (a new JVM for Java), as the
// youngest, the group settles again, and the next leave comes after a
// random pause of up to 3 s (rbPhase), so that it falls at a random phase
// of the heartbeats. In the classic protocol the remaining members learn
// of the rebalance from their next heartbeat, and the coordinator waits
// for all of them: the heartbeat interval dominates those figures. Metrics: ms/op the mean, p50-ms,
// p90-ms, max-ms the distribution, leave-ms the mean time the leaver took
// to go (Shutdown returned, or the JVM exited); each op's latency is
// logged ("ops-ms") so that rounds can be pooled.
func BenchmarkRebalanceLatency(b *testing.B) {
	b.Run("client=zkconsumer-zk/broker=kafka3.9", func(b *testing.B) {
		c := testcluster.Shared(b)
		benchRebalanceLatency(b, c, func(env *rbEnv, seq int) (rbMember, error) {
			cfg := DefaultConfig()
			cfg.ZooKeeperConnect = c.ZKConnect()
			cfg.GroupID = env.group
			cfg.ConsumerID = rbName(seq)
			return startRBConnector(env, cfg, seq)
		})
	})
	for _, hb := range rbHeartbeats {
		for _, br := range rbBrokers {
			b.Run("client=zkconsumer-kafka/broker="+br.name+"/"+hb.name, func(b *testing.B) {
				c := br.cluster(b)
				benchRebalanceLatency(b, c, func(env *rbEnv, seq int) (rbMember, error) {
					cfg := DefaultConfig()
					cfg.GroupID = env.group
					cfg.GroupCoordination = CoordinationKafka
					cfg.BootstrapServers = env.bootstrap
					cfg.ClientID = rbName(seq)
					cfg.HeartbeatInterval = hb.heartbeat
					cfg.SessionTimeout = hb.session
					return startRBConnector(env, cfg, seq)
				})
			})
		}
		for _, br := range rbBrokers {
			b.Run("client="+br.java+"/broker="+br.name+"/"+hb.name, func(b *testing.B) {
				benchRebalanceLatency(b, br.cluster(b), func(env *rbEnv, seq int) (rbMember, error) {
					return startRBJava(env, br.tool, seq, append(slices.Clone(br.javaProps),
						"--consumer-property", fmt.Sprintf("heartbeat.interval.ms=%d", hb.heartbeat.Milliseconds()),
						"--consumer-property", fmt.Sprintf("session.timeout.ms=%d", hb.session.Milliseconds()))...)
				})
			})
		}
	}
}

// rbHeartbeats are the heartbeat settings of the Kafka-coordinated runs.
var rbHeartbeats = []struct {
	name               string
	heartbeat, session time.Duration
}{
	{"hb=300ms", 300 * time.Millisecond, 6 * time.Second},
	{"hb=3s", 3 * time.Second, 45 * time.Second},
}

// rbBrokers are the brokers of the Kafka-coordinated runs, with the Java
// console consumer of the same release.
var rbBrokers = []struct {
	name, java string
	cluster    func(testing.TB) *testcluster.Cluster
	tool       javaTool
	javaProps  []string
}{
	{"kafka3.9", "java3.9", testcluster.Shared, testcluster.Tool, nil},
	{"kraft4", "java4-classic", testcluster.SharedKRaft, testcluster.Tool4,
		[]string{"--consumer-property", "group.protocol=classic"}},
}

const (
	rbGroupSize  = 4
	rbPartitions = 32
	// rbWindow is how long a settled group must have delivered every
	// partition from one member only.
	rbWindow = time.Second
	// rbSettleTimeout bounds every wait for the group to settle.
	rbSettleTimeout = 3 * time.Minute
	// rbPhase bounds the random pause between a settled group and the
	// leave: the longest heartbeat interval, so that the leave falls at a
	// uniformly random phase of the members' heartbeats, which a
	// rebalance aligns (each member's heartbeat timer restarts when it
	// gets its assignment).
	rbPhase = 3 * time.Second
)

// rbName is the client or consumer id of the member started seq-th: the
// ids sort in the order the members started, so the range assignor puts
// the oldest member first, whatever the client.
func rbName(seq int) string { return fmt.Sprintf("rb-%05d", seq) }

// rbTick is the producer's period: ZKCONSUMER_BENCH_TICK, default 10ms.
func rbTick(b *testing.B) time.Duration {
	if s := os.Getenv("ZKCONSUMER_BENCH_TICK"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			b.Fatalf("ZKCONSUMER_BENCH_TICK=%q: want a positive duration", s)
		}
		return d
	}
	return 10 * time.Millisecond
}

// rbEnv is what a member needs to join the benchmark's group.
type rbEnv struct {
	cluster   *testcluster.Cluster
	bootstrap string
	topic     string
	group     string
	seen      *deliveries
}

// rbMember is one member of the group.
type rbMember interface {
	// seq is the member's index in the order members started.
	seq() int
	// leave leaves the group gracefully and returns when the member is
	// gone.
	leave(ctx context.Context) error
	// stop ends the member however it can; it is idempotent.
	stop()
}

func benchRebalanceLatency(b *testing.B, c *testcluster.Cluster, start func(env *rbEnv, seq int) (rbMember, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	topic := testcluster.UniqueName("rb-latency")
	err := c.CreateTopic(ctx, topic, rbPartitions, 1)
	cancel()
	if err != nil {
		b.Fatal(err)
	}
	env := &rbEnv{cluster: c, bootstrap: strings.Join(c.BrokerAddrs(), ","), topic: topic,
		group: testcluster.UniqueName("g-rb-latency"), seen: newDeliveries(rbPartitions)}
	stopTicks, err := startTicks(c, topic, rbPartitions, rbTick(b))
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		// A failed send under load costs a tick, not the measurement.
		failed, err := stopTicks()
		if failed > 0 {
			b.Logf("%d ticks not sent whole, the first: %v", failed, err)
		} else if err != nil {
			b.Error(err)
		}
	}()
	next := 0
	join := func() rbMember {
		m, err := start(env, next)
		if err != nil {
			b.Fatal(err)
		}
		next++
		return m
	}
	var members []rbMember
	defer func() {
		for _, m := range members {
			m.stop()
		}
	}()
	for range rbGroupSize {
		members = append(members, join())
	}
	if _, err := env.seen.waitSettled(seqs(members), time.Now()); err != nil {
		b.Fatal(err)
	}
	time.Sleep(rand.N(rbPhase))

	var took, leaving []time.Duration
	for b.Loop() {
		leaver, rest := members[0], slices.Clone(members[1:])
		t0 := env.seen.mark()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := leaver.leave(ctx)
		cancel()
		if err != nil {
			b.Fatalf("member %d leaving: %v", leaver.seq(), err)
		}
		leaving = append(leaving, time.Since(t0))
		owners, err := env.seen.waitSettled(seqs(rest), t0)
		if err != nil {
			b.Fatalf("after member %d left: %v", leaver.seq(), err)
		}
		d, err := env.seen.latency(owners)
		if err != nil {
			b.Fatal(err)
		}
		took = append(took, d)
		b.StopTimer()
		members = append(rest, join())
		if _, err := env.seen.waitSettled(seqs(members), time.Now()); err != nil {
			b.Fatal(err)
		}
		time.Sleep(rand.N(rbPhase))
		b.StartTimer()
	}
	reportLatencies(b, took, leaving)
}

func seqs(ms []rbMember) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.seq()
	}
	return out
}

// reportLatencies reports the distribution of took and the mean of
// leaving, and logs every op.
func reportLatencies(b *testing.B, took, leaving []time.Duration) {
	if len(took) == 0 {
		return
	}
	msOf := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	var line strings.Builder
	for _, d := range took {
		fmt.Fprintf(&line, " %.1f", msOf(d))
	}
	b.Logf("ops-ms %s:%s", b.Name(), line.String())
	sorted := slices.Clone(took)
	slices.Sort(sorted)
	n := len(sorted)
	var total, left time.Duration
	for i := range took {
		total += took[i]
		left += leaving[i]
	}
	b.ReportMetric(msOf(total)/float64(n), "ms/op")
	b.ReportMetric(msOf(sorted[n/2]), "p50-ms")
	b.ReportMetric(msOf(sorted[min(n-1, n*9/10)]), "p90-ms")
	b.ReportMetric(msOf(sorted[n-1]), "max-ms")
	b.ReportMetric(msOf(left)/float64(n), "leave-ms")
}
