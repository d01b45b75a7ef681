package connector

import (
	"bufio"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// scalaConsumer runs Kafka 1.1.1's old console consumer in the group and
// feeds what it prints into col.
func scalaConsumer(t *testing.T, ctx context.Context, col *collector, c *testcluster.Cluster, group, topic string, extra ...string) (wait func() error) {
	t.Helper()
	args := append([]string{"--zookeeper", c.ZKConnect(), "--topic", topic, "--group", group,
		"--consumer-property", "rebalance.max.retries=20",
		"--consumer-property", "rebalance.backoff.ms=500",
		"--consumer-property", "zookeeper.session.timeout.ms=6000",
		"--consumer-property", "auto.commit.interval.ms=200"}, extra...)
	cmd, err := testcluster.OldTool(ctx, "kafka.tools.ConsoleConsumer", args...)
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		defer close(done)
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if seq, err := testcluster.ParseSeq(lines.Bytes()); err == nil {
				col.add(record{Consumer: "scala", Partition: -1, Offset: -1, Seq: seq})
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Cancel()
		<-done
		_ = cmd.Wait()
	})
	return func() error {
		<-done
		return cmd.Wait()
	}
}

// TestMixedGroupWithScalaConsumer: a group of two zkconsumer members and
// Kafka 1.1.1's Scala consumer agrees on the assignment under both
// strategies (no claim conflicts, every partition owned once) and reads
// every message exactly once.
func TestMixedGroupWithScalaConsumer(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	for _, strategy := range []AssignmentStrategy{StrategyRange, StrategyRoundRobin} {
		t.Run(strategy.String(), func(t *testing.T) {
			ctx := testwait.Context(t, 4*time.Minute)
			topic := newTopic(t, c, 7, 0)
			group := testcluster.UniqueName("g-mixed-" + strategy.String())
			col := newCollector()
			// --from-beginning: the Scala member may start fetching after
			// the messages below were produced.
			scalaConsumer(t, ctx, col, c, group, topic, "--from-beginning", "--consumer-property", "partition.assignment.strategy="+strategy.String())
			observer := observerSession(t, c)
			require.Eventually(t, func() bool {
				ids, err := observer.Children(ctx, zkutil.ConsumerIDsPath(group))
				return err == nil && len(ids) == 1
			}, 90*time.Second, 50*time.Millisecond, "the Scala consumer registered")

			cfg := testConfig(c, group)
			cfg.PartitionAssignmentStrategy = []AssignmentStrategy{strategy}
			cfg.RebalanceBackoff = 500 * time.Millisecond
			for _, name := range []string{"go1", "go2"} {
				conn := newConnector(t, cfg)
				streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
				require.NoError(t, err)
				col.read(ctx, name, streams[topic][0])
			}
			waitOwners(t, c, group, topic, 7, 3)
			// A late rebalance of one member may still move partitions:
			// read until one pass sees every partition owned.
			var owners map[string]int
			require.Eventually(t, func() bool {
				owners = map[string]int{}
				for p := int32(0); p < 7; p++ {
					data, _, err := observer.Get(ctx, zkutil.OwnerPath(group, topic, p))
					if errors.Is(err, zksession.ErrNoNode) {
						return false
					}
					require.NoError(t, err)
					th, err := zkutil.ParseConsumerThreadID(string(data))
					require.NoError(t, err)
					owners[th.ConsumerID]++
				}
				return len(owners) == 3
			}, time.Minute, 50*time.Millisecond, "all three members own partitions: %v", owners)

			const n = 1400
			_, err := c.Produce(ctx, topic, n, testcluster.ProduceOptions{Partition: -1})
			require.NoError(t, err)
			rs := col.waitAll(t, 0, n, 2*time.Minute)
			require.Len(t, rs, n, "exactly once across Go and Scala members")
			counts := map[string]int{}
			for _, r := range rs {
				counts[r.Consumer]++
			}
			require.Len(t, counts, 3, "every member read messages: %v", counts)
		})
	}
}

// TestOffsetsResumeAcrossScalaAndGo: offsets committed by zkconsumer are
// resumed by the Scala consumer, and the other way round.
func TestOffsetsResumeAcrossScalaAndGo(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 4*time.Minute)
	topic := newTopic(t, c, 3, 300)
	group := testcluster.UniqueName("g-handover")

	// Go reads 0..299 and commits at shutdown.
	goFirst := newCollector()
	conn, err := New(ctx, testConfig(c, group))
	require.NoError(t, err)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	goFirst.read(ctx, "go", streams[topic][0])
	goFirst.waitAll(t, 0, 300, 2*time.Minute)
	require.NoError(t, conn.Shutdown(ctx))
	goFirst.wg.Wait()

	// Scala resumes: it reads exactly the 90 new messages.
	_, err = c.Produce(ctx, topic, 90, testcluster.ProduceOptions{Partition: -1, FirstSeq: 300})
	require.NoError(t, err)
	scala := newCollector()
	wait := scalaConsumer(t, ctx, scala, c, group, topic, "--max-messages", "90", "--timeout-ms", "60000")
	require.NoError(t, wait())
	rs := scala.snapshot()
	require.Len(t, rs, 90)
	for _, r := range rs {
		require.GreaterOrEqual(t, r.Seq, 300, "Scala re-read a message Go had committed")
	}

	// Go resumes after what Scala committed.
	_, err = c.Produce(ctx, topic, 60, testcluster.ProduceOptions{Partition: -1, FirstSeq: 390})
	require.NoError(t, err)
	goSecond := newCollector()
	conn2 := newConnector(t, testConfig(c, group))
	streams, err = conn2.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	goSecond.read(ctx, "go", streams[topic][0])
	rs = goSecond.waitAll(t, 390, 60, 2*time.Minute)
	for _, r := range rs {
		require.GreaterOrEqual(t, r.Seq, 390, "Go re-read a message Scala had committed")
	}
}

// TestScalaGroupCommandDescribesUs: Kafka 1.1.1's
// ConsumerGroupCommand --zookeeper --describe shows our group's committed
// offsets, lag and owners.
func TestScalaGroupCommandDescribesUs(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 4*time.Minute)
	topic := newTopic(t, c, 2, 100)
	group := testcluster.UniqueName("g-describe")
	cfg := testConfig(c, group)
	cfg.AutoCommitEnable = false
	conn := newConnector(t, cfg)
	consumeAndCommit(t, ctx, conn, topic, 60)
	committed := readOffsets(t, c, group, topic, 2)
	require.Equal(t, int64(60), committed[0]+committed[1])

	out, err := testcluster.RunOldTool(ctx, "kafka.admin.ConsumerGroupCommand", "--zookeeper", c.ZKConnect(), "--describe", "--group", group)
	require.NoError(t, err)
	t.Logf("ConsumerGroupCommand --describe:\n%s", out)
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[0] != topic {
			continue
		}
		p, _ := strconv.Atoi(f[1])
		cur, _ := strconv.ParseInt(f[2], 10, 64)
		end, _ := strconv.ParseInt(f[3], 10, 64)
		lag, _ := strconv.ParseInt(f[4], 10, 64)
		require.Equal(t, committed[int32(p)], cur, "current offset of partition %d", p)
		require.Equal(t, int64(50), end, "log end offset of partition %d", p)
		require.Equal(t, end-cur, lag)
		require.Equal(t, conn.ConsumerID(), f[5], "owner of partition %d", p)
		rows++
	}
	require.Equal(t, 2, rows, "a row per partition in:\n%s", out)
}

func observerSession(t *testing.T, c *testcluster.Cluster) *zksession.Session {
	t.Helper()
	s, err := zksession.Dial(context.Background(), zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// consumeAndCommit reads n messages of topic through one stream of conn,
// marks each consumed and commits them.
func consumeAndCommit(t *testing.T, ctx context.Context, conn *ConsumerConnector, topic string, n int) {
	t.Helper()
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	s := streams[topic][0]
	for range n {
		msg, err := s.Next(ctx)
		require.NoError(t, err)
		s.MarkConsumed(msg)
	}
	require.NoError(t, conn.CommitOffsets(ctx))
}
