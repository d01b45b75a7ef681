package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// These tests run the console-consumer command as a process (main
// included) next to Kafka 1.1.1's, to compare what only a process shows:
// a closed stdout pipe and the exit status after a signal.

// consumers names our command and Kafka 1.1.1's.
var consumers = []string{"ours", "Kafka 1.1.1"}

// command prepares the console consumer named which with args.
func command(t *testing.T, ctx context.Context, which string, args ...string) *exec.Cmd {
	t.Helper()
	var cmd *exec.Cmd
	var err error
	if which == "ours" {
		cmd, err = startMain(ctx, args...)
	} else {
		cmd, err = testcluster.OldTool(ctx, "kafka.tools.ConsoleConsumer", args...)
	}
	require.NoError(t, err)
	return cmd
}

func TestClosedStdoutPipeLikeKafka111(t *testing.T) {
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	zk := zkSession(t, ctx, c)
	topic := testcluster.UniqueName("cc-pipe")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
	_, err := c.Produce(ctx, topic, 20, testcluster.ProduceOptions{Partition: 0})
	require.NoError(t, err)

	// As with "| head -n 1": the reader goes away after one line. Neither
	// dies of SIGPIPE: each reports it, exits 0, and removes its
	// generated group.
	for _, name := range consumers {
		t.Run(name, func(t *testing.T) {
			cmd := command(t, ctx, name, "--zookeeper", c.ZKConnect(), "--topic", topic, "--from-beginning", "--timeout-ms", "60000")
			before, err := zk.Children(ctx, "/consumers")
			require.NoError(t, err)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			var stderr testcluster.LockedBuffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			line, err := bufio.NewReader(stdout).ReadString('\n')
			require.NoError(t, err, stderr.String())
			require.Equal(t, "seq=0;\n", line)
			require.NoError(t, stdout.Close())
			// More messages: the next write finds the pipe closed.
			_, err = c.Produce(ctx, topic, 100, testcluster.ProduceOptions{Partition: 0})
			require.NoError(t, err)
			code := exitCode(t, cmd.Wait())
			require.Equal(t, 0, code, stderr.String())
			require.Contains(t, stderr.String(), "Unable to write to standard out, closing consumer.")
			require.Contains(t, stderr.String(), "Processed a total of")
			after, err := zk.Children(ctx, "/consumers")
			require.NoError(t, err)
			// Other tests add groups to the shared cluster meanwhile: look
			// only at generated ones.
			var left []string
			for _, g := range after {
				if strings.HasPrefix(g, "console-consumer-") && !slices.Contains(before, g) {
					left = append(left, g)
				}
			}
			require.Empty(t, left, "the generated group is gone")
		})
	}
}

func TestExitStatusAfterSignalsLikeKafka111(t *testing.T) {
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	zk := zkSession(t, ctx, c)

	// Ctrl-C once consuming: the JVM runs its shutdown hooks and exits
	// 128+2; ours leaves the group the same way and exits the same.
	for _, name := range consumers {
		t.Run("consuming/"+name, func(t *testing.T) {
			topic := testcluster.UniqueName("cc-signal")
			require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
			cmd := command(t, ctx, name, "--zookeeper", c.ZKConnect(), "--topic", topic, "--from-beginning")
			var stdout, stderr testcluster.LockedBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			before, err := zk.Children(ctx, "/consumers")
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			testwait.WaitFor(t, time.Minute, func() bool {
				return generatedGroupOwning(t, ctx, zk, before, topic) != ""
			}, "the consumer owns %s", topic)
			// A message printed: the consumer is in its loop.
			_, err = c.Produce(ctx, topic, 1, testcluster.ProduceOptions{Partition: 0})
			require.NoError(t, err)
			testwait.WaitFor(t, time.Minute, func() bool { return stdout.String() == "seq=0;\n" }, "the message printed")
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			require.Equal(t, 130, exitCode(t, cmd.Wait()), stderr.String())
			require.Contains(t, stderr.String(), "Processed a total of 1 messages")
			if name == "ours" {
				// Kafka 1.1.1 means to, but its deletion fails silently
				// while the JVM shuts down: the group stays.
				// Only the console consumer's generated groups are
				// compared: other tests' groups come and go on the shared
				// cluster meanwhile.
				after, err := zk.Children(ctx, "/consumers")
				require.NoError(t, err)
				generated := func(groups []string) []string {
					var out []string
					for _, g := range groups {
						if strings.HasPrefix(g, "console-consumer-") {
							out = append(out, g)
						}
					}
					return out
				}
				require.ElementsMatch(t, generated(before), generated(after), "the generated group is gone")
			}
		})
	}

	// SIGTERM while still connecting to a ZooKeeper that does not answer.
	for _, name := range consumers {
		t.Run("connecting/"+name, func(t *testing.T) {
			cmd := command(t, ctx, name, "--zookeeper", "127.0.0.1:1", "--topic", "t")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			// A JVM that has not yet installed its SIGTERM handler dies of
			// the signal (at load average 77 that took over a second).
			testwait.WaitFor(t, time.Minute, func() bool { return catchesSIGTERM(cmd.Process.Pid) }, "%s to handle SIGTERM", name)
			time.Sleep(time.Second) // nothing to wait for: it is to be still connecting
			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
			require.Equal(t, 143, exitCode(t, cmd.Wait()), stderr.String())
		})
	}
}

// catchesSIGTERM reports whether process pid has installed a handler for
// SIGTERM: the bit of SigCgt in /proc/pid/status.
func catchesSIGTERM(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(uint(syscall.SIGTERM)-1)) != 0
		}
	}
	return false
}
