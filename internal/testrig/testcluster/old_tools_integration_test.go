package testcluster

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestOldConsoleConsumerReadsFrom39 proves that Kafka 1.1.1's old,
// ZooKeeper-coordinated console consumer (the reference implementation for
// interoperability tests) reads messages produced to our 3.9 broker.
func TestOldConsoleConsumerReadsFrom39(t *testing.T) {
	t.Parallel()
	c := Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	topic := UniqueName("harness-old-console")
	require.NoError(t, c.CreateTopic(ctx, topic, 2, 1))
	const n = 50
	_, err := c.Produce(ctx, topic, n, ProduceOptions{Partition: -1})
	require.NoError(t, err)

	group := UniqueName("old-console")
	out, err := RunOldTool(ctx, "kafka.tools.ConsoleConsumer",
		"--zookeeper", c.ZKConnect(), "--topic", topic, "--group", group,
		"--from-beginning", "--max-messages", "50", "--timeout-ms", "60000")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, n, "output:\n%s", out)
	seqs := make([]int, 0, n)
	for _, l := range lines {
		seq, err := ParseSeq([]byte(l))
		require.NoError(t, err)
		seqs = append(seqs, seq)
	}
	sort.Ints(seqs)
	for i, s := range seqs {
		require.Equal(t, i, s, "every message exactly once")
	}

	// The old consumer registered and committed in ZooKeeper, under the
	// same chroot as the brokers.
	conn, err := c.dialZK(ctx)
	require.NoError(t, err)
	defer conn.Close()
	offsets, _, err := conn.Children(c.Chroot() + "/consumers/" + group + "/offsets/" + topic)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"0", "1"}, offsets)
	t.Logf("Kafka 1.1.1 ConsoleConsumer --zookeeper read %d messages from the 3.9 broker", len(lines))
}
