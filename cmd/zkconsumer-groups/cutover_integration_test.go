package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/groups"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// cutoverMessages is how many messages the cut-over tests produce, over 3
// partitions; the zkconsumer group reads part of them, the Java consumer the
// rest.
const cutoverMessages = 300

// TestCutOverToJavaConsumer walks the whole move of a group from ZooKeeper
// to Kafka's group coordinator: a zkconsumer group consumes part of a topic
// and stops; --migrate-to-kafka copies its offsets (a dry run first, which
// writes nothing); Kafka 3.9's own Java consumer then reads exactly the
// rest of the topic in the same group: nothing lost, nothing read twice.
func TestCutOverToJavaConsumer(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic, group := testcluster.UniqueName("cutover"), testcluster.UniqueName("cutover-g")
	require.NoError(t, c.CreateTopic(ctx, topic, 3, 1))
	_, err := c.Produce(ctx, topic, cutoverMessages, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)

	m := startReadingMember(ctx, t, topic, memberConfig(c, group))
	m.consume(ctx, 120)
	goRead := m.stop(ctx)

	// The dry run writes nothing.
	migrate := []string{"--zookeeper", c.ZKConnect(), "--migrate-to-kafka", "--group", group, "--bootstrap-server", c.BrokerAddrs()[0]}
	out := runOK(t, migrate...)
	assert.Contains(t, out, "Dry run")
	assert.Equal(t, 3, strings.Count(out, "write "), "three partitions to write:\n%s", out)
	assert.Empty(t, kafkaOffsets(ctx, t, c, topic, group), "a dry run wrote offsets to Kafka")

	out = runOK(t, append(migrate, "--execute")...)
	assert.Equal(t, 3, strings.Count(out, "written"), "three partitions written:\n%s", out)
	// Idempotent: a second run has nothing to write.
	out = runOK(t, append(migrate, "--execute")...)
	assert.Equal(t, 3, strings.Count(out, "unchanged"), "a second run changes nothing:\n%s", out)

	javaRead := javaConsume(ctx, t, c, topic, group)
	assertExactlyOnce(t, goRead, javaRead)
}

// TestCutOverWithDualCommit: members running with offsets.storage=kafka
// and dual.commit.enabled=true during the move. The migration refuses while
// they are registered, runs with --force, never moves Kafka's offsets back,
// and after the members stop, the Java consumer reads exactly the rest.
func TestCutOverWithDualCommit(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic, group := testcluster.UniqueName("cutover-dual"), testcluster.UniqueName("cutover-dual-g")
	require.NoError(t, c.CreateTopic(ctx, topic, 3, 1))
	_, err := c.Produce(ctx, topic, cutoverMessages, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)

	cfg := memberConfig(c, group)
	cfg.OffsetsStorage = connector.OffsetsStorageKafka
	cfg.DualCommitEnabled = connector.DualCommitOn
	m := startReadingMember(ctx, t, topic, cfg)
	m.consume(ctx, 100)
	require.NoError(t, m.conn.CommitOffsets(ctx))

	args := []string{"--zookeeper", c.ZKConnect(), "--migrate-to-kafka", "--group", group, "--bootstrap-server", c.BrokerAddrs()[0], "--execute"}
	r := runTool(t, args...)
	assert.Equal(t, 1, r.code, "refused while a member is registered")
	assert.Contains(t, r.stderr, "registered members")
	assert.Contains(t, r.stderr, m.conn.ConsumerID())

	r = runTool(t, append(args, "--force")...)
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stderr, "Warning: group "+group+" has 1 member(s) registered in ZooKeeper")
	assert.NotContains(t, r.stdout, "written", "dual commit already wrote Kafka; nothing to copy")

	// The member goes on consuming and committing (to Kafka first) after
	// the migration, then stops.
	m.consume(ctx, 50)
	goRead := m.stop(ctx)

	javaRead := javaConsume(ctx, t, c, topic, group)
	assertExactlyOnce(t, goRead, javaRead)
}

// assertExactlyOnce checks that goRead and javaRead together hold every
// offset of the topic's three partitions once.
func assertExactlyOnce(t *testing.T, goRead, javaRead map[int32][]int64) {
	t.Helper()
	total := 0
	for p := int32(0); p < 3; p++ {
		seen := map[int64]string{}
		for _, off := range goRead[p] {
			seen[off] = "zkconsumer"
		}
		for _, off := range javaRead[p] {
			if by, dup := seen[off]; dup {
				t.Errorf("partition %d offset %d read by %s and again by the Java consumer", p, off, by)
			}
			seen[off] = "java"
		}
		for off := int64(0); off < int64(len(seen)); off++ {
			if _, ok := seen[off]; !ok {
				t.Errorf("partition %d offset %d read by nobody", p, off)
			}
		}
		total += len(seen)
	}
	assert.Equal(t, cutoverMessages, total, "every message read once")
	assert.NotEmpty(t, javaRead, "the Java consumer read the rest")
}

// kafkaOffsets reads the group's offsets of the topic's three partitions
// from Kafka, leaving out those without one.
func kafkaOffsets(ctx context.Context, t *testing.T, c *testcluster.Cluster, topic, group string) map[groups.TopicPartition]int64 {
	t.Helper()
	k, err := groups.KafkaCoordinator(c.BrokerAddrs(), group, 10*time.Second, nil)
	require.NoError(t, err)
	defer k.Close()
	offs, failed, err := k.Fetch(ctx, []groups.TopicPartition{{Topic: topic, Partition: 0}, {Topic: topic, Partition: 1}, {Topic: topic, Partition: 2}})
	require.NoError(t, err)
	require.Empty(t, failed)
	for tp, off := range offs {
		if off < 0 {
			delete(offs, tp)
		}
	}
	return offs
}

// TestMigrateErrors: --migrate-to-kafka fails clearly, within --timeout and
// without writing anything, for an unknown group, a group without offsets,
// garbage in an offset node, and unreachable brokers.
func TestMigrateErrors(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := session(t, c)
	topic := newTopic(t, c, 2, 10)
	bootstrap := c.BrokerAddrs()[0]

	r := runTool(t, "--zookeeper", c.ZKConnect(), "--migrate-to-kafka", "--group", testcluster.UniqueName("nobody"), "--bootstrap-server", bootstrap)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "unknown group")

	empty := testcluster.UniqueName("g-no-offsets")
	require.NoError(t, zk.EnsurePath(context.Background(), zkutil.ConsumerIDsPath(empty)))
	r = runTool(t, "--zookeeper", c.ZKConnect(), "--migrate-to-kafka", "--group", empty, "--bootstrap-server", bootstrap)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "no offsets in ZooKeeper")

	garbage := testcluster.UniqueName("g-garbage")
	fakeGroup(t, zk, garbage, topic, 3)
	writeNode(t, zk, zkutil.OffsetPath(garbage, topic, 1), "abc")
	r = runTool(t, "--zookeeper", c.ZKConnect(), "--migrate-to-kafka", "--group", garbage, "--bootstrap-server", bootstrap, "--execute")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, zkutil.OffsetPath(garbage, topic, 1), "names the bad node")

	good := testcluster.UniqueName("g-unreachable")
	fakeGroup(t, zk, good, topic, 3, 4)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	start := time.Now()
	r = runTool(t, "--zookeeper", c.ZKConnect(), "--migrate-to-kafka", "--group", good, "--bootstrap-server", dead, "--execute", "--timeout", "3s")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "connection refused", "names the cause")
	assert.Less(t, time.Since(start), 15*time.Second, "bounded by --timeout")

	for _, g := range []string{garbage, good} {
		assert.Empty(t, kafkaOffsets(context.Background(), t, c, topic, g), "nothing written to Kafka for %s", g)
	}
}
