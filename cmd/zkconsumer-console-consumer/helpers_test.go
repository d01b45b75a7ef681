package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// Tests that call t.Parallel use topics and groups of their own on the
// shared clusters (a generated group only where they find it as the one
// owning their topic), or no cluster, or the package's one private
// cluster (SharedSecure); they change no package state, and the times
// they bound are many times what they take. The Kafka 1.1.1 tables run
// their cases, each a JVM start, in parallel too. The others stay serial,
// and so never run beside a parallel one: TestTimeoutExitsWhenIdle
// replaces slog.Default; TestClosedStdoutPipeLikeKafka111,
// TestExitStatusAfterSignalsLikeKafka111 and
// TestGeneratedGroupIsDeletedOnExitLikeKafka111 compare the cluster's
// generated console-consumer-* groups before and after, which the
// parallel tests create; TestInterruptWhileConnectingToZooKeeper takes a
// second.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(mainArgsEnv); ok {
		// Started by startMain: be the console-consumer command.
		var argv []string
		if err := json.Unmarshal([]byte(args), &argv); err != nil {
			panic(err)
		}
		os.Args = append([]string{"console-consumer"}, argv...)
		main()
		return
	}
	testcluster.Main(m)
}

// mainArgsEnv carries the arguments of the command to a copy of the test
// binary started by startMain.
const mainArgsEnv = "ZKCONSUMER_CONSOLE_CONSUMER_ARGS"

// startMain runs the console-consumer command, main included, as a process
// of its own (the test binary again), in its own process group, so that
// signals and a closed stdout reach it as they reach the real command.
func startMain(ctx context.Context, args ...string) (*exec.Cmd, error) {
	data, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+string(data))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd, nil
}

// exitCode is the exit status of a finished command, failing the test when
// it did not run.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		t.Fatalf("command did not run: %v", err)
		return -1
	}
}

// result is what one run of a console consumer printed and returned.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) lines() []string { return splitLines(r.stdout) }

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// runOurs runs this console consumer in-process.
func runOurs(ctx context.Context, args ...string) result {
	var stdout, stderr testcluster.LockedBuffer
	code := run(ctx, args, &stdout, &stderr)
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// runOursTo runs this console consumer in-process with stdout as its
// standard output.
func runOursTo(ctx context.Context, stdout io.Writer, args ...string) result {
	var stderr testcluster.LockedBuffer
	code := run(ctx, args, stdout, &stderr)
	return result{stderr: stderr.String(), code: code}
}

// runKafka runs Kafka 1.1.1's kafka.tools.ConsoleConsumer with args.
func runKafka(t *testing.T, ctx context.Context, args ...string) result {
	t.Helper()
	cmd, err := testcluster.OldTool(ctx, "kafka.tools.ConsoleConsumer", args...)
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("Kafka 1.1.1 ConsoleConsumer: %v\n%s", err, stderr.String())
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// zkSession opens a ZooKeeper session under the cluster's chroot.
func zkSession(t *testing.T, ctx context.Context, c *testcluster.Cluster) *zksession.Session {
	t.Helper()
	s, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: c.ZKConnect()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// committed reads a group's committed offset of one partition from
// ZooKeeper; ok is false when there is none.
func committed(t *testing.T, ctx context.Context, s *zksession.Session, group, topic string, partition int32) (offset int64, ok bool) {
	t.Helper()
	path := zkutil.OffsetPath(group, topic, partition)
	// The members wrote through whichever server they are connected to.
	require.NoError(t, s.Sync(ctx, path))
	data, _, err := s.Get(ctx, path)
	if errors.Is(err, zksession.ErrNoNode) {
		return 0, false
	}
	require.NoError(t, err)
	offset, err = zkutil.DecodeOffset(path, data)
	require.NoError(t, err)
	return offset, true
}

// produceRaw writes one message with exactly this key and value (nil
// stays null) to a partition.
func produceRaw(t *testing.T, c *testcluster.Cluster, topic string, partition int32, key, value []byte) {
	t.Helper()
	cfg := testcluster.SaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(c.BrokerAddrs(), cfg)
	require.NoError(t, err)
	defer p.Close()
	msg := &sarama.ProducerMessage{Topic: topic, Partition: partition}
	if key != nil {
		msg.Key = sarama.ByteEncoder(key)
	}
	if value != nil {
		msg.Value = sarama.ByteEncoder(value)
	}
	_, _, err = p.SendMessage(msg)
	require.NoError(t, err)
}

// keyValue is one message's key and value; nil stays null.
type keyValue struct{ key, value []byte }

// produceAll writes messages with exactly these keys and values, in order,
// to a partition.
func produceAll(t *testing.T, c *testcluster.Cluster, topic string, partition int32, kvs []keyValue) {
	t.Helper()
	cfg := testcluster.SaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(c.BrokerAddrs(), cfg)
	require.NoError(t, err)
	defer p.Close()
	for _, kv := range kvs {
		msg := &sarama.ProducerMessage{Topic: topic, Partition: partition}
		if kv.key != nil {
			msg.Key = sarama.ByteEncoder(kv.key)
		}
		if kv.value != nil {
			msg.Value = sarama.ByteEncoder(kv.value)
		}
		_, _, err = p.SendMessage(msg)
		require.NoError(t, err)
	}
}
