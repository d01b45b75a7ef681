package kafkagroup

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestMixedGroupWithJavaConsumer runs one group of a zkconsumer member and
// Kafka 3.9's Java console consumer (the Java KafkaConsumer, range
// assignor), each side leading once: both get disjoint halves of the topic
// covering it, the coordinator stores the same assignment both believe in,
// and the Java consumer prints records of exactly its partitions.
func TestMixedGroupWithJavaConsumer(t *testing.T) {
	t.Parallel()
	t.Run("zkconsumer leads", func(t *testing.T) { mixedGroup(t, false) })
	t.Run("java leads", func(t *testing.T) { mixedGroup(t, true) })
}

func mixedGroup(t *testing.T, javaFirst bool) {
	c := testcluster.Shared(t)
	const partitions = 4
	topic := createTopic(t, c, "kg-mixed", partitions)
	group := testcluster.UniqueName("kg-mixed")
	cfg := testConfig(c, group, topic)
	if !javaFirst {
		// Member ids start with the client id: this one sorts before
		// Java's, the other after, so each side gets each range once.
		cfg.ClientID = "a-zkconsumer"
	}

	var java *javaConsumer
	var r *runner
	if javaFirst {
		java = startJavaConsumer(t, c, topic, group)
		testwait.WaitFor(t, 90*time.Second, func() bool {
			state, desc := describe(t, c, group)
			return state == "Stable" && len(desc) == 1
		}, "the Java consumer to join")
		r = startRunner(t, cfg)
	} else {
		r = startRunner(t, cfg)
		testwait.WaitFor(t, 30*time.Second, func() bool {
			return settled(map[string]int32{topic: partitions}, r)
		}, "the zkconsumer member to own the topic")
		java = startJavaConsumer(t, c, topic, group)
	}

	var javaID string
	var desc map[string]map[string][]int32
	testwait.WaitFor(t, 90*time.Second, func() bool {
		g := r.live()
		if g == nil {
			return false
		}
		var state string
		state, desc = describe(t, c, group)
		if state != "Stable" || len(desc) != 2 || !slices.Equal(desc[g.MemberID][topic], g.Assignment[topic]) {
			return false
		}
		for id := range desc {
			if id != g.MemberID {
				javaID = id
			}
		}
		all := append(slices.Clone(desc[g.MemberID][topic]), desc[javaID][topic]...)
		slices.Sort(all)
		return slices.Equal(all, []int32{0, 1, 2, 3})
	}, "a stable group of both, sharing the topic")
	g := r.live()
	require.Equal(t, !javaFirst, g.Leader, "leader")
	require.Equal(t, "range", g.Protocol)
	require.Len(t, g.Assignment[topic], 2)
	javaParts := desc[javaID][topic]
	require.Len(t, javaParts, 2)
	// Java's member ids are "<client.id>-<uuid>".
	require.True(t, strings.HasPrefix(javaID, "java-"+group+"-"), "the other member %q is the Java consumer", javaID)
	t.Logf("generation %d: zkconsumer %s owns %v (leader %v), Java %s owns %v", g.ID, g.MemberID, g.Assignment[topic], g.Leader, javaID, javaParts)
	// Range over sorted member ids: the smaller id gets partitions 0 and 1.
	if g.MemberID < javaID {
		require.Equal(t, []int32{0, 1}, g.Assignment[topic])
	} else {
		require.Equal(t, []int32{2, 3}, g.Assignment[topic])
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	produced, err := c.Produce(ctx, topic, 40, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)
	want := 0
	for _, p := range javaParts {
		want += len(produced.Offsets[p])
	}
	require.Positive(t, want)
	testwait.WaitFor(t, 60*time.Second, func() bool {
		return len(java.records(t)) >= want
	}, "the Java consumer to print its partitions' records")
	seen := map[int32]int{}
	for _, rec := range java.records(t) {
		require.Contains(t, javaParts, rec.Partition, "Java printed a record of a partition it does not own")
		seen[rec.Partition]++
	}
	for _, p := range javaParts {
		require.Equal(t, len(produced.Offsets[p]), seen[p], "records of partition %d", p)
	}
	t.Logf("the Java consumer printed %v records per partition", seen)
	require.Equal(t, g.ID, r.live().ID, "the group stayed in one generation")
}

// javaConsumer is a running Kafka 3.9 console consumer.
type javaConsumer struct {
	out, errOut testcluster.LockedBuffer
}

func startJavaConsumer(t *testing.T, c *testcluster.Cluster, topic, group string) *javaConsumer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd, err := testcluster.Tool(ctx, "org.apache.kafka.tools.consumer.ConsoleConsumer",
		"--bootstrap-server", strings.Join(c.BrokerAddrs(), ","), "--topic", topic, "--group", group,
		"--from-beginning", "--property", "print.partition=true", "--property", "print.offset=true",
		"--consumer-property", "partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor",
		"--consumer-property", "heartbeat.interval.ms=500",
		"--consumer-property", "client.id=java-"+group)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	j := &javaConsumer{}
	cmd.Stdout, cmd.Stderr = &j.out, &j.errOut
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("Java console consumer stderr:\n%s", j.errOut.String())
		}
	})
	return j
}

type javaRecord struct {
	Partition int32
	Offset    int64
}

// records parses what the console consumer printed so far
// ("Partition:1\tOffset:42\t<value>" lines).
func (j *javaConsumer) records(t *testing.T) []javaRecord {
	var recs []javaRecord
	for line := range strings.Lines(j.out.String()) {
		line, complete := strings.CutSuffix(line, "\n")
		if !complete {
			break // the last line, still being written
		}
		fields := strings.SplitN(line, "\t", 3)
		if len(fields) < 2 {
			continue
		}
		p, err1 := strconv.ParseInt(strings.TrimPrefix(fields[0], "Partition:"), 10, 32)
		off, err2 := strconv.ParseInt(strings.TrimPrefix(fields[1], "Offset:"), 10, 64)
		require.NoError(t, err1, "line %q", line)
		require.NoError(t, err2, "line %q", line)
		recs = append(recs, javaRecord{Partition: int32(p), Offset: off})
	}
	return recs
}
