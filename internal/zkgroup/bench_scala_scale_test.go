package zkgroup

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// BenchmarkScalaRebalanceScale is the Kafka 1.1.1 side of
// BenchmarkRebalanceScale: groups of 10 and 20 Scala consumers
// (kafka.tools.ConsoleConsumer --zookeeper, one JVM each, Kafka's default
// rebalance settings) on a topic of 100 partitions. It measures one
// graceful leave (SIGTERM: the JVM's shutdown hook shuts the connector
// down) and one crash (SIGKILL: the session times out after
// zookeeper.session.timeout.ms, 6s) of the oldest member, each from the
// signal until every owner node holds the range assignment of the
// remaining members, polled in ZooKeeper every 50ms.
//
// Each JVM is heavy, so the benchmark runs only with
// ZKCONSUMER_SCALE_SCALA=1; ZKCONSUMER_SCALE_MEMBERS and
// ZKCONSUMER_SCALE_PARTITIONS change the sizes.
func BenchmarkScalaRebalanceScale(b *testing.B) {
	if os.Getenv("ZKCONSUMER_SCALE_SCALA") != "1" {
		b.Skip("one JVM per member: set ZKCONSUMER_SCALE_SCALA=1 to run it")
	}
	memberCounts := scaleSizes(b, "ZKCONSUMER_SCALE_MEMBERS", []int{10, 20})
	partitionCounts := scaleSizes(b, "ZKCONSUMER_SCALE_PARTITIONS", []int{100})
	for _, parts := range partitionCounts {
		for _, n := range memberCounts {
			b.Run(fmt.Sprintf("members=%d/partitions=%d", n, parts), func(b *testing.B) { benchScalaGroup(b, n, parts) })
		}
	}
}

func benchScalaGroup(b *testing.B, n, parts int) {
	c := testcluster.Shared(b)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	observer, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer observer.Close()
	topic := testcluster.UniqueName(fmt.Sprintf("rb-scala-%d", parts))
	if err := c.CreateTopic(ctx, topic, int32(parts), 1); err != nil {
		b.Fatal(err)
	}
	group := testcluster.UniqueName("g-scala-scale")
	ids := make([]string, n)
	cmds := make([]*exec.Cmd, n)
	defer func() {
		for _, cmd := range cmds {
			if cmd != nil && cmd.Process != nil {
				_ = cmd.Cancel()
				_ = cmd.Wait()
			}
		}
	}()
	for i := range n {
		// Kafka names the member <group>_<consumer.id>.
		ids[i] = fmt.Sprintf("%s_s%03d", group, i)
		cmd, err := testcluster.OldTool(ctx, "kafka.tools.ConsoleConsumer", "--zookeeper", c.ZKConnect(), "--topic", topic, "--group", group,
			"--consumer-property", fmt.Sprintf("consumer.id=s%03d", i))
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		cmds[i] = cmd
	}
	start := time.Now()
	if err := waitScalaOwners(ctx, observer, group, topic, parts, ids, 10*time.Minute); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d Scala members converged in %v", n, time.Since(start).Round(time.Millisecond))

	var graceful, crash time.Duration
	for b.Loop() {
		for _, kill := range []bool{false, true} {
			sig := syscall.SIGTERM
			if kill {
				sig = syscall.SIGKILL
			}
			start := time.Now()
			if err := cmds[0].Process.Signal(sig); err != nil {
				b.Fatal(err)
			}
			ids = ids[1:]
			if err := waitScalaOwners(ctx, observer, group, topic, parts, ids, 3*time.Minute); err != nil {
				b.Fatal(err)
			}
			d := time.Since(start)
			_ = cmds[0].Wait()
			cmds = cmds[1:]
			if kill {
				crash += d
			} else {
				graceful += d
			}
		}
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ms(graceful)/float64(b.N), "graceful-settle-ms")
	b.ReportMetric(ms(crash)/float64(b.N), "crash-settle-ms")
}

// waitScalaOwners polls the owner nodes until they hold the range
// assignment of members (one stream each).
func waitScalaOwners(ctx context.Context, observer *zksession.Session, group, topic string, parts int, members []string, timeout time.Duration) error {
	sorted := slices.Sorted(slices.Values(members))
	ps := make([]int32, parts)
	for i := range ps {
		ps[i] = int32(i)
	}
	actx := zkassign.AssignmentContext{ConsumerID: sorted[0], ConsumersForTopic: map[string][]zkutil.ConsumerThreadID{},
		PartitionsForTopic: map[string][]int32{topic: ps}, Consumers: sorted}
	sub := StaticSubscription(map[string]int{topic: 1})
	for _, id := range sorted {
		threads := sub.ThreadIDs(id, nil, true)
		if id == sorted[0] {
			actx.MyTopicThreadIDs = threads
		}
		actx.ConsumersForTopic[topic] = append(actx.ConsumersForTopic[topic], threads[topic]...)
	}
	a, _ := zkassign.NewAssignor(strategyname.Range)
	assignment, err := a.Assign(actx)
	if err != nil {
		return err
	}
	want := map[zkutil.TopicPartition]string{}
	for _, share := range assignment {
		for tp, th := range share {
			want[tp] = th.String()
		}
	}
	deadline := time.Now().Add(timeout)
	var got map[zkutil.TopicPartition]string
	for time.Now().Before(deadline) {
		got, err = ownersOf(ctx, observer, group, []string{topic})
		if err == nil && maps.Equal(got, want) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("owner nodes (%d) do not match the assignment of %d members (%d partitions): %v", len(got), len(members), len(want), err)
}
