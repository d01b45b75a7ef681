package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/groups"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// deletionRows parses the TOPIC PARTITION STATUS table of
// --delete-offsets (ours or Kafka 3.9's) into "topic/partition" -> the
// status's first word ("Deleted", "Successful", "Error:").
func deletionRows(t *testing.T, out string) map[string]string {
	t.Helper()
	rows := map[string]string{}
	header := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "TOPIC" && f[1] == "PARTITION" && f[2] == "STATUS" {
			header = true
			continue
		}
		if !header || len(f) < 3 {
			continue
		}
		rows[f[0]+"/"+f[1]] = f[2]
	}
	require.True(t, header, "a TOPIC PARTITION STATUS table:\n%s", out)
	return rows
}

// offsetExists reports whether group has an offset node for tp.
func offsetExists(t *testing.T, zk *zksession.Session, group, topic string, p int32) bool {
	t.Helper()
	ok, _, err := zk.Exists(context.Background(), zkutil.OffsetPath(group, topic, p))
	require.NoError(t, err)
	return ok
}

// TestDeleteOffsetsZooKeeper: --delete-offsets on a ZooKeeper group
// follows Kafka's coordinator: while a member is registered, the offsets
// of the topic it subscribes to are refused and those of another topic
// deleted; once it left, any offset goes. Unknown topics, partitions and
// groups are reported; a refusal exits 1.
func TestDeleteOffsetsZooKeeper(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := session(t, c)
	subscribed := newTopic(t, c, 2, 20)
	other := newTopic(t, c, 2, 0)
	group := testcluster.UniqueName("g-deloff")

	m := startMember(t, c, group, subscribed, 1)
	waitOwned(t, zk, group, subscribed, 2)
	m.consume(t, 6)
	for p := int32(0); p < 2; p++ {
		require.True(t, offsetExists(t, zk, group, subscribed, p), "the member committed")
		writeNode(t, zk, zkutil.OffsetPath(group, other, p), string(zkutil.EncodeOffset(int64(5+p))))
	}

	r := runTool(t, "--zookeeper", c.ZKConnect(), "--delete-offsets", "--group", group,
		"--topic", subscribed, "--topic", other, "--topic", "no-such-topic", "--topic", other+"-gone:3")
	require.Equal(t, 1, r.code, "some offsets were refused")
	require.Contains(t, r.stderr, "some offsets were not deleted")
	rows := deletionRows(t, r.stdout)
	require.Equal(t, map[string]string{
		subscribed + "/0": "Error:", subscribed + "/1": "Error:",
		other + "/0": "Deleted", other + "/1": "Deleted",
		"no-such-topic/-": "Error:", other + "-gone/3": "Error:",
	}, rows)
	require.Contains(t, r.stdout, m.conn.ConsumerID(), "the refusal names the subscribing member")
	require.Contains(t, r.stdout, "unknown topic")
	for p := int32(0); p < 2; p++ {
		require.True(t, offsetExists(t, zk, group, subscribed, p), "refused: kept")
		require.False(t, offsetExists(t, zk, group, other, p), "deleted")
	}
	ok, _, err := zk.Exists(context.Background(), zkutil.OffsetsTopicPath(group, other))
	require.NoError(t, err)
	require.False(t, ok, "the emptied topic node goes too")

	// The offsets of a topic deleted from the cluster can be deleted.
	gone := other + "-deleted"
	writeNode(t, zk, zkutil.OffsetPath(group, gone, 0), "9")
	out := runOK(t, "--zookeeper", c.ZKConnect(), "--delete-offsets", "--group", group, "--topic", gone)
	require.Equal(t, map[string]string{gone + "/0": "Deleted"}, deletionRows(t, out))
	require.False(t, offsetExists(t, zk, group, gone, 0))

	// A partition out of range of an existing topic is named.
	r = runTool(t, "--zookeeper", c.ZKConnect(), "--delete-offsets", "--group", group, "--topic", other+":7")
	require.Equal(t, 1, r.code)
	require.Equal(t, map[string]string{other + "/7": "Error:"}, deletionRows(t, r.stdout))
	require.Contains(t, r.stdout, "unknown partition")

	// The member left: the group is empty and its offsets can go.
	m.stop(t)
	require.Eventually(t, func() bool {
		ids, err := zk.Children(context.Background(), zkutil.ConsumerIDsPath(group))
		return err == nil && len(ids) == 0
	}, 30*time.Second, 100*time.Millisecond)
	out = runOK(t, "--zookeeper", c.ZKConnect(), "--delete-offsets", "--group", group, "--topic", subscribed+":0")
	require.Contains(t, out, "Deleted the committed offsets of group '"+group+"'")
	require.Equal(t, map[string]string{subscribed + "/0": "Deleted"}, deletionRows(t, out))
	require.False(t, offsetExists(t, zk, group, subscribed, 0))
	require.True(t, offsetExists(t, zk, group, subscribed, 1), "only the partition named")

	r = runTool(t, "--zookeeper", c.ZKConnect(), "--delete-offsets", "--group", "no-such-group-"+group, "--topic", subscribed)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "does not exist")
	require.Empty(t, r.stdout)
}

// kafkaMember joins group, coordinated by Kafka, on topic and reads one
// message, so that the coordinator has it as a member subscribed to topic.
func kafkaMember(t *testing.T, c *testcluster.Cluster, group, topic string) *connector.ConsumerConnector {
	t.Helper()
	cfg := connector.DefaultConfig()
	cfg.GroupID = group
	cfg.GroupCoordination = connector.CoordinationKafka
	cfg.BootstrapServers = strings.Join(c.BrokerAddrs(), ",")
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	cfg.AutoCommitEnable = false
	cfg.SessionTimeout = 6 * time.Second
	cfg.HeartbeatInterval = 300 * time.Millisecond
	conn, err := connector.New(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = conn.Shutdown(ctx)
	})
	ctx := testwait.Context(t, 2*time.Minute)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	_, err = streams[topic][0].Next(ctx)
	require.NoError(t, err)
	return conn
}

// commitToKafka commits offset 3 for each partition of topics to group's
// coordinator, from outside the group.
func commitToKafka(t *testing.T, c *testcluster.Cluster, group string, topics ...string) {
	t.Helper()
	k, err := groups.KafkaCoordinator(c.BrokerAddrs(), group, 10*time.Second, nil)
	require.NoError(t, err)
	defer k.Close()
	offsets := map[zkutil.TopicPartition]int64{}
	for _, topic := range topics {
		for p := int32(0); p < 2; p++ {
			offsets[zkutil.TopicPartition{Topic: topic, Partition: p}] = 3
		}
	}
	require.NoError(t, k.Commit(testwait.Context(t, time.Minute), offsets))
}

// TestDeleteOffsetsKafkaLikeKafka39: --bootstrap-server --delete-offsets
// on a group coordinated by Kafka gives each partition the outcome Kafka
// 3.9's kafka-consumer-groups.sh --delete-offsets gives it on a twin
// group: the topic a live member subscribes to refused, the other
// deleted, an unknown topic reported; and the offsets are gone from the
// coordinator.
func TestDeleteOffsetsKafkaLikeKafka39(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	subscribed := newTopic(t, c, 2, 20)
	other := newTopic(t, c, 2, 0)
	ours, theirs := testcluster.UniqueName("g-kdeloff-ours"), testcluster.UniqueName("g-kdeloff-kafka")
	for _, g := range []string{ours, theirs} {
		commitToKafka(t, c, g, subscribed, other)
	}
	mOurs := kafkaMember(t, c, ours, subscribed)
	kafkaMember(t, c, theirs, subscribed)

	bootstrap := strings.Join(c.BrokerAddrs(), ",")
	r := runTool(t, "--bootstrap-server", bootstrap, "--delete-offsets", "--group", ours,
		"--topic", subscribed, "--topic", other, "--topic", "no-such-topic")
	require.Equal(t, 1, r.code, "some offsets were refused")
	oursRows := deletionRows(t, r.stdout)
	require.Equal(t, map[string]string{
		subscribed + "/0": "Error:", subscribed + "/1": "Error:",
		other + "/0": "Deleted", other + "/1": "Deleted",
		"no-such-topic/-": "Error:",
	}, oursRows)
	require.Contains(t, r.stdout, "subscribes to the topic")

	out, err := testcluster.RunTool(testwait.Context(t, 3*time.Minute), "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
		"--bootstrap-server", c.BrokerAddrs()[0], "--delete-offsets", "--group", theirs,
		"--topic", subscribed, "--topic", other, "--topic", "no-such-topic")
	require.NoError(t, err, out)
	t.Logf("Kafka 3.9 --delete-offsets:\n%s", out)
	// Kafka 3.9.2 prints its rows without line breaks between them, so
	// each expected row is looked for by its topic and partition.
	for key, status := range oursRows {
		topic, part, _ := strings.Cut(key, "/")
		if part == "-" {
			part = "Not Provided"
		}
		m := regexp.MustCompile(regexp.QuoteMeta(topic) + `\s+` + part + `\s+(Successful|Error:)`).FindStringSubmatch(out)
		require.NotNil(t, m, "Kafka 3.9 reports %s", key)
		want := map[string]string{"Deleted": "Successful", "Error:": "Error:"}[status]
		require.Equal(t, want, m[1], "%s: Kafka 3.9's outcome", key)
	}
	require.Contains(t, out, "GroupSubscribedToTopicException")

	// What the coordinator holds now.
	k, err := groups.KafkaCoordinator(c.BrokerAddrs(), ours, 10*time.Second, nil)
	require.NoError(t, err)
	defer k.Close()
	tps := []zkutil.TopicPartition{{Topic: subscribed, Partition: 0}, {Topic: subscribed, Partition: 1}, {Topic: other, Partition: 0}, {Topic: other, Partition: 1}}
	got, failed, err := k.Fetch(testwait.Context(t, time.Minute), tps)
	require.NoError(t, err)
	require.Empty(t, failed)
	require.Equal(t, int64(3), got[tps[0]], "refused: kept")
	require.Equal(t, int64(3), got[tps[1]], "refused: kept")
	require.Equal(t, zkutil.NoOffset, got[tps[2]], "deleted")
	require.Equal(t, zkutil.NoOffset, got[tps[3]], "deleted")

	// The member left: the group is empty, and its offsets can go.
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, mOurs.Shutdown(sctx))
	out = runOK(t, "--bootstrap-server", bootstrap, "--delete-offsets", "--group", ours, "--topic", subscribed+":1")
	require.Equal(t, map[string]string{subscribed + "/1": "Deleted"}, deletionRows(t, out))
	got, _, err = k.Fetch(testwait.Context(t, time.Minute), tps[:2])
	require.NoError(t, err)
	require.Equal(t, zkutil.NoOffset, got[tps[1]])
	require.Equal(t, int64(3), got[tps[0]], "only the partition named")

	r = runTool(t, "--bootstrap-server", bootstrap, "--delete-offsets", "--group", "no-such-group-"+ours, "--topic", other)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "does not exist")
}
