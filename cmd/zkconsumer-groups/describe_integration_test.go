package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// kafkaDescribe runs Kafka 1.1.1's ConsumerGroupCommand --describe on group.
func kafkaDescribe(t *testing.T, c *testcluster.Cluster, group string) string {
	t.Helper()
	out, err := testcluster.RunOldTool(testwait.Context(t, 3*time.Minute), "kafka.admin.ConsumerGroupCommand", "--zookeeper", c.ZKConnect(), "--describe", "--group", group)
	require.NoError(t, err)
	t.Logf("Kafka 1.1.1 --describe:\n%s", out)
	return out
}

// TestDescribeMatchesKafka111: --describe shows the same rows (topic,
// partition, current offset, log end offset, lag, consumer id) as Kafka
// 1.1.1's kafka-consumer-groups.sh --zookeeper --describe, while two
// members consume and after they stopped; the layout is Kafka's.
func TestDescribeMatchesKafka111(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := session(t, c)
	topic := newTopic(t, c, 4, 200)
	group := testcluster.UniqueName("g-describe")
	m1 := startMember(t, c, group, topic, 1)
	m2 := startMember(t, c, group, topic, 1)
	waitOwned(t, zk, group, topic, 4)
	// Let the rebalance settle: both members own two partitions.
	require.Eventually(t, func() bool {
		rows := describeRows(runOK(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", group))
		owners := map[string]int{}
		for _, r := range rows {
			owners[r[5]]++
		}
		return owners[m1.conn.ConsumerID()] == 2 && owners[m2.conn.ConsumerID()] == 2
	}, 60*time.Second, 500*time.Millisecond)
	m1.consume(t, 30)
	m2.consume(t, 50)
	// More messages, so that the lag is not zero.
	_, err := c.Produce(testwait.Context(t, time.Minute), topic, 40, testcluster.ProduceOptions{Partition: -1, FirstSeq: 200})
	require.NoError(t, err)

	ours := runOK(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", group)
	theirs := kafkaDescribe(t, c, group)
	require.Len(t, describeRows(ours), 4)
	require.Equal(t, describeRows(theirs), describeRows(ours), "same rows as Kafka 1.1.1 while members run")
	for _, r := range describeRows(ours) {
		require.Contains(t, []string{m1.conn.ConsumerID(), m2.conn.ConsumerID()}, r[5])
	}
	// One topic: Kafka's row order is ours, so the layouts can be
	// compared byte for byte.
	require.Equal(t, theirs, ours, "byte for byte")

	m1.stop(t)
	m2.stop(t)
	ours = runOK(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", group)
	theirs = kafkaDescribe(t, c, group)
	rows := describeRows(ours)
	require.Len(t, rows, 4)
	require.Equal(t, describeRows(theirs), rows, "same rows as Kafka 1.1.1 after the members stopped")
	require.Equal(t, theirs, ours, "byte for byte")
	for _, r := range rows {
		require.Equal(t, "-", r[5], "no owner after the members stopped")
	}
}

// TestDescribeIdleMember: a member with more streams than partitions
// leaves a registered member without partitions; both tools list it on a
// row of its own.
func TestDescribeIdleMember(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := session(t, c)
	topic := newTopic(t, c, 1, 10)
	group := testcluster.UniqueName("g-idle")
	m1 := startMember(t, c, group, topic, 1)
	m1.consume(t, 10)
	waitOwned(t, zk, group, topic, 1)
	m2 := startMember(t, c, group, topic, 1)
	require.Eventually(t, func() bool {
		ids, err := zk.Children(testwait.Context(t, time.Minute), "/consumers/"+group+"/ids")
		return err == nil && len(ids) == 2
	}, time.Minute, 100*time.Millisecond)
	waitOwned(t, zk, group, topic, 1)
	var ours string
	require.Eventually(t, func() bool {
		ours = runOK(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", group)
		return len(describeRows(ours)) == 2
	}, time.Minute, 500*time.Millisecond)
	theirs := kafkaDescribe(t, c, group)
	require.Equal(t, describeRows(theirs), describeRows(ours))
	require.Equal(t, theirs, ours, "byte for byte")
	_ = m2
}

// TestDescribeMembersAndState: --members lists each member with its host,
// partitions, streams, pattern and registration time; --state tells
// Stable, then Empty.
func TestDescribeMembersAndState(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := session(t, c)
	topic := newTopic(t, c, 3, 30)
	group := testcluster.UniqueName("g-members")
	m := startMember(t, c, group, topic, 2)
	waitOwned(t, zk, group, topic, 3)

	out := runOK(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", group, "--members")
	require.Contains(t, out, "CONSUMER-ID")
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, m.conn.ConsumerID()) {
			line = l
		}
	}
	f := strings.Fields(line)
	require.Len(t, f, 6, "member line: %q", line)
	require.Equal(t, "3", f[2], "#PARTITIONS")
	require.Equal(t, topic+":2", f[3], "STREAMS")
	require.Equal(t, "static", f[4], "PATTERN")
	reg, err := time.Parse(time.RFC3339, f[5])
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), reg, 5*time.Minute)

	require.Eventually(t, func() bool {
		return strings.Contains(runOK(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", group, "--state"), "Stable")
	}, time.Minute, 500*time.Millisecond)
	m.stop(t)
	out = runOK(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", group, "--state")
	f = strings.Fields(strings.Split(strings.TrimSpace(out), "\n")[1])
	require.Equal(t, []string{group, "Empty", "0", "3", "0"}, f)
}
