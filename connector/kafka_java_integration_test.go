package connector

import (
	"bufio"
	"context"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// javaTools are the Java console consumer of one Kafka release.
type javaTools struct {
	tool    func(ctx context.Context, mainClass string, args ...string) (*exec.Cmd, error)
	consume func(ctx context.Context, bootstrap, topic, group string, idle time.Duration, extra ...string) ([]testcluster.JavaRecord, error)
	extra   []string // consumer properties this release needs for a classic, range group
}

// TestKafkaModeMixedWithJavaConsumer shares one group between a zkconsumer
// member and Kafka's Java console consumer, 3.9's on a Kafka 3.9 broker and
// 4.x's (classic group protocol) on a Kafka 4.x KRaft broker: the Java
// consumer joins, the topic grows, the Java consumer crashes (its
// partitions move after the session timeout), then another Java consumer
// joins for a while and leaves. The coordinator's assignment is what each
// side consumes, every message is read, and each side resumes from the
// other's commits.
func TestKafkaModeMixedWithJavaConsumer(t *testing.T) {
	t.Parallel()
	t.Run("java3.9", func(t *testing.T) {
		mixedWithJava(t, testcluster.Shared(t), javaTools{tool: testcluster.Tool, consume: testcluster.JavaConsoleConsume})
	})
	t.Run("java4-kraft", func(t *testing.T) {
		mixedWithJava(t, testcluster.SharedKRaft(t), javaTools{tool: testcluster.Tool4, consume: testcluster.JavaConsoleConsume4,
			extra: []string{"--consumer-property", "group.protocol=classic"}})
	})
}

func mixedWithJava(t *testing.T, c *testcluster.Cluster, java javaTools) {
	topic := newTopic(t, c, 4, 40)
	group := testcluster.UniqueName("g-mixed")
	bootstrap := strings.Join(c.BrokerAddrs(), ",")
	ctx := testwait.Context(t, 5*time.Minute)
	col := newCollector()
	a := newConnector(t, kafkaConfig(c, group))
	streams, err := a.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col.read(ctx, "zk", streams[topic][0])
	col.waitAll(t, 0, 40, time.Minute)

	// Join: the Java consumer takes half of the topic.
	j := startJavaMember(t, java, bootstrap, topic, group)
	ms := waitGroup(t, c, group, topic, 4, 2)
	javaParts, zkParts := splitMembers(t, ms, topic)
	require.Len(t, javaParts, 2)
	require.Eventually(t, func() bool { return slices.Equal(ownedOf(a, topic), zkParts) }, 30*time.Second, 50*time.Millisecond,
		"zkconsumer owns what the coordinator assigned it")
	produced, err := c.Produce(ctx, topic, 40, testcluster.ProduceOptions{Partition: -1, FirstSeq: 40})
	require.NoError(t, err)
	want := 0
	for _, p := range javaParts {
		want += len(produced.Offsets[p])
	}
	require.Eventually(t, func() bool { return j.count(t, 40) >= want }, time.Minute, 100*time.Millisecond, "the Java consumer reads its partitions")
	for _, r := range j.records(t) {
		if r.Seq >= 40 {
			require.Contains(t, javaParts, r.Partition, "Java read a partition it does not own")
		}
	}
	waitBoth(t, col, j, 0, 80)

	// Partition growth: the leader notices, the group rebalances over six.
	require.NoError(t, c.AddPartitions(ctx, topic, 6))
	waitGroup(t, c, group, topic, 6, 2)
	_, err = c.Produce(ctx, topic, 60, testcluster.ProduceOptions{Partition: -1, FirstSeq: 80})
	require.NoError(t, err)
	waitBoth(t, col, j, 80, 60)

	// Crash: the Java consumer is killed; its partitions come to
	// zkconsumer after the session timeout, from the Java commits.
	j.kill()
	waitGroup(t, c, group, topic, 6, 1)
	_, err = c.Produce(ctx, topic, 60, testcluster.ProduceOptions{Partition: -1, FirstSeq: 140})
	require.NoError(t, err)
	rs := waitBoth(t, col, j, 0, 200)
	again := 0
	for _, n := range rs {
		again += n - 1
	}
	t.Logf("after the crash: %d messages read twice (at least once around the crash)", again)

	// Join and leave: a second Java consumer reads its share while it is in
	// the group and leaves when idle (committing); zkconsumer resumes its
	// partitions from those commits, and nothing is read twice.
	before := col.snapshot()
	type result struct {
		recs []testcluster.JavaRecord
		err  error
	}
	done := make(chan result, 1)
	go func() {
		recs, err := java.consume(ctx, bootstrap, topic, group, 10*time.Second, append(javaProps(group), java.extra...)...)
		done <- result{recs, err}
	}()
	waitGroup(t, c, group, topic, 6, 2)
	_, err = c.Produce(ctx, topic, 60, testcluster.ProduceOptions{Partition: -1, FirstSeq: 200})
	require.NoError(t, err)
	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		t.Fatal("the Java console consumer did not stop")
	}
	require.NoError(t, res.err)
	waitGroup(t, c, group, topic, 6, 1)
	_, err = c.Produce(ctx, topic, 60, testcluster.ProduceOptions{Partition: -1, FirstSeq: 260})
	require.NoError(t, err)
	for _, r := range res.recs {
		seq, err := testcluster.ParseSeq([]byte(r.Value))
		require.NoError(t, err)
		require.GreaterOrEqual(t, seq, 200, "the second Java consumer resumed from the group's commits")
	}
	require.NotEmpty(t, res.recs, "the second Java consumer got a share")
	var seen map[int]int
	require.Eventually(t, func() bool {
		seen = map[int]int{}
		for _, r := range res.recs {
			seq, _ := testcluster.ParseSeq([]byte(r.Value))
			seen[seq]++
		}
		for _, r := range col.snapshot()[len(before):] {
			seen[r.Seq]++
		}
		for seq := 200; seq < 320; seq++ {
			if seen[seq] == 0 {
				return false
			}
		}
		return true
	}, time.Minute, 100*time.Millisecond, "messages never read")
	for seq := 200; seq < 320; seq++ {
		require.Equal(t, 1, seen[seq], "message %d read %d times across an orderly join and leave", seq, seen[seq])
	}
}

// javaProps makes a Java console consumer a fast member of a classic group
// with the range assignor (Java 3.x offers [range, cooperative-sticky]).
func javaProps(group string) []string {
	return []string{
		"--consumer-property", "partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor",
		"--consumer-property", "session.timeout.ms=6000",
		"--consumer-property", "heartbeat.interval.ms=500",
		"--consumer-property", "metadata.max.age.ms=1000",
		"--consumer-property", "auto.commit.interval.ms=200",
		"--consumer-property", "client.id=java-" + group,
		"--from-beginning",
	}
}

// javaMember is a long-running Java console consumer.
type javaMember struct {
	cmd         *exec.Cmd
	cancel      context.CancelFunc
	out, errOut testcluster.LockedBuffer
	once        sync.Once
	waited      chan struct{}
}

func startJavaMember(t *testing.T, java javaTools, bootstrap, topic, group string) *javaMember {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	args := append([]string{"--bootstrap-server", bootstrap, "--topic", topic, "--group", group,
		"--property", "print.partition=true", "--property", "print.offset=true"}, javaProps(group)...)
	cmd, err := java.tool(ctx, "org.apache.kafka.tools.consumer.ConsoleConsumer", append(args, java.extra...)...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return runJavaMember(t, cmd, cancel)
}

// runJavaMember starts cmd, a Java console consumer made under a context
// that cancel ends, and kills it when the test ends (logging its stderr if
// the test failed).
func runJavaMember(t *testing.T, cmd *exec.Cmd, cancel context.CancelFunc) *javaMember {
	t.Helper()
	j := &javaMember{cmd: cmd, cancel: cancel, waited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &j.out, &j.errOut
	require.NoError(t, cmd.Start())
	go func() { _ = cmd.Wait(); close(j.waited) }()
	t.Cleanup(func() {
		j.kill()
		if t.Failed() {
			t.Logf("Java console consumer stderr:\n%s", j.errOut.String())
		}
	})
	return j
}

// kill ends the JVM with SIGKILL: no commit, no LeaveGroup.
func (j *javaMember) kill() {
	j.once.Do(func() {
		j.cancel()
		<-j.waited
	})
}

// records parses the complete lines printed so far.
func (j *javaMember) records(t *testing.T) []record {
	var out []record
	text := j.out.String()
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[:i+1]
	} else {
		return nil
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), "\t", 3)
		if len(fields) != 3 || !strings.HasPrefix(fields[0], "Partition:") {
			continue // a notice, not a record
		}
		p, err1 := strconv.ParseInt(strings.TrimPrefix(fields[0], "Partition:"), 10, 32)
		off, err2 := strconv.ParseInt(strings.TrimPrefix(fields[1], "Offset:"), 10, 64)
		seq, err3 := testcluster.ParseSeq([]byte(fields[2]))
		require.NoError(t, err1, "line %q", sc.Text())
		require.NoError(t, err2, "line %q", sc.Text())
		require.NoError(t, err3, "line %q", sc.Text())
		out = append(out, record{Consumer: "java", Partition: int32(p), Offset: off, Seq: seq})
	}
	return out
}

// count returns how many records with a sequence number from first on the
// Java consumer printed.
func (j *javaMember) count(t *testing.T, first int) int {
	n := 0
	for _, r := range j.records(t) {
		if r.Seq >= first {
			n++
		}
	}
	return n
}

// waitBoth waits until zkconsumer and the Java consumer together have read
// every message first..first+n-1, and returns how often each sequence
// number was read.
func waitBoth(t *testing.T, col *collector, j *javaMember, first, n int) map[int]int {
	t.Helper()
	var seen map[int]int
	missing := 0
	require.Eventually(t, func() bool {
		seen = distinct(append(col.snapshot(), j.records(t)...))
		missing = 0
		for seq := first; seq < first+n; seq++ {
			if seen[seq] == 0 {
				missing++
			}
		}
		return missing == 0
	}, 90*time.Second, 100*time.Millisecond, "messages never read")
	return seen
}

// splitMembers returns the partitions of topic the Java member and the
// zkconsumer member own, telling them apart by the Java client id.
func splitMembers(t *testing.T, ms []groupMember, topic string) (java, zk []int32) {
	t.Helper()
	for _, m := range ms {
		if strings.HasPrefix(m.id, "java-") {
			java = m.partitions[topic]
		} else {
			zk = m.partitions[topic]
		}
	}
	require.NotEmpty(t, java, "a Java member in %+v", ms)
	return java, zk
}

// ownedOf returns the partitions of topic conn owns now.
func ownedOf(conn *ConsumerConnector, topic string) []int32 {
	var out []int32
	for _, p := range conn.Stats().Partitions {
		if p.Topic == topic {
			out = append(out, p.Partition)
		}
	}
	return out
}
