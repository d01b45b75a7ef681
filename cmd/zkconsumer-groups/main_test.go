package main

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/stream"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// Tests that call t.Parallel work on topics, groups or chroots of their
// own on the shared cluster, or on the package's one private cluster
// (SharedSecure); they change no package state, and where they bound how
// long a failure takes, the bound is five times the --timeout it follows
// or more. The others stay serial, and so never run beside a parallel
// one: TestResetModes resets by a time and by a duration with a margin of
// about a second; TestUnreachableZooKeeper, TestRefusedZooKeeperFailsFast,
// TestUsageErrors and the help tests take no time.
func TestMain(m *testing.M) { testcluster.Main(m) }

// result is what one run of the command produced.
type result struct {
	stdout, stderr string
	code           int
}

// runTool runs the command in-process with args.
func runTool(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	t.Logf("zkconsumer-groups %s -> %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// runOK runs the command and requires exit code 0.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	r := runTool(t, args...)
	require.Equal(t, 0, r.code, "exit code; stderr:\n%s", r.stderr)
	return r.stdout
}

// newTopic creates a topic with partitions and n messages spread over them.
func newTopic(t *testing.T, c *testcluster.Cluster, partitions int32, n int) string {
	t.Helper()
	return testcluster.NewTopic(t, c, testcluster.TopicSpec{Prefix: "grp", Partitions: partitions, Messages: n, ValueSize: 32})
}

// session opens a ZooKeeper session on the cluster's chroot for the test.
func session(t *testing.T, c *testcluster.Cluster) *zksession.Session {
	t.Helper()
	s, err := zksession.Dial(context.Background(), zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// memberConfig is a connector configuration for group with manual commits.
func memberConfig(c *testcluster.Cluster, group string) connector.Config {
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = c.ZKConnect()
	cfg.GroupID = group
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	cfg.AutoCommitEnable = false
	cfg.ZooKeeperSessionTimeout = 4 * time.Second
	cfg.RebalanceBackoff = 500 * time.Millisecond
	cfg.RebalanceMaxRetries = 20
	return cfg
}

// member is one running zkconsumer member of a group.
type member struct {
	conn    *connector.ConsumerConnector
	streams []*stream.KafkaStream
	stopped bool
}

// startMember joins group with the given streams on topic.
func startMember(t *testing.T, c *testcluster.Cluster, group, topic string, streams int) *member {
	t.Helper()
	conn, err := connector.New(t.Context(), memberConfig(c, group))
	require.NoError(t, err)
	m := &member{conn: conn}
	t.Cleanup(func() { m.stop(t) })
	ss, err := conn.CreateMessageStreams(testwait.Context(t, 2*time.Minute), map[string]int{topic: streams})
	require.NoError(t, err)
	m.streams = ss[topic]
	return m
}

// consume reads n messages from the member's streams in turn, marks them
// and commits.
func (m *member) consume(t *testing.T, n int) {
	t.Helper()
	ctx := testwait.Context(t, 2*time.Minute)
	for i := 0; i < n; i++ {
		s := m.streams[i%len(m.streams)]
		msg, err := s.Next(ctx)
		require.NoError(t, err)
		s.MarkConsumed(msg)
	}
	require.NoError(t, m.conn.CommitOffsets(ctx))
}

// stop shuts the member down (committing nothing more: auto-commit is off).
func (m *member) stop(t *testing.T) {
	t.Helper()
	if m.stopped {
		return
	}
	m.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, m.conn.Shutdown(ctx))
}

// waitOwned waits until every partition of topic in group is owned.
func waitOwned(t *testing.T, zk *zksession.Session, group, topic string, partitions int32) {
	t.Helper()
	require.Eventually(t, func() bool {
		for p := int32(0); p < partitions; p++ {
			ok, _, err := zk.Exists(context.Background(), zkutil.OwnerPath(group, topic, p))
			if err != nil || !ok {
				return false
			}
		}
		return true
	}, 90*time.Second, 50*time.Millisecond, "every partition of %s owned in %s", topic, group)
}

// describeRows parses the offsets table of --describe (ours or Kafka
// 1.1.1's) into sorted rows of six columns.
func describeRows(out string) [][6]string {
	var rows [][6]string
	header := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 6 && f[0] == "TOPIC" && f[5] == "CONSUMER-ID" {
			header = true
			continue
		}
		if !header || len(f) != 6 {
			continue
		}
		rows = append(rows, [6]string(f))
	}
	sort.Slice(rows, func(i, j int) bool { return strings.Join(rows[i][:], " ") < strings.Join(rows[j][:], " ") })
	return rows
}

func testCtxBackground() context.Context { return context.Background() }
