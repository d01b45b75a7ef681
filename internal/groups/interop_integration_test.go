package groups

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// kafka39GroupCommand runs Kafka 3.9's kafka-consumer-groups.sh main class
// against c and returns its stdout and stderr. The tool exits 0 when most
// commands fail, printing "Error: ..." instead, so callers look at the
// output; it exits 1 on usage errors, which fails the test.
func kafka39GroupCommand(t *testing.T, ctx context.Context, c *testcluster.Cluster, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := kafka39GroupCommandErr(t, ctx, c, args...)
	require.NoError(t, err, "stderr:\n%s", stderr)
	return stdout, stderr
}

// kafka39GroupCommandErr is kafka39GroupCommand returning the JVM's exit error.
func kafka39GroupCommandErr(t *testing.T, ctx context.Context, c *testcluster.Cluster, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd, err := testcluster.Tool(ctx, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
		append([]string{"--bootstrap-server", strings.Join(c.BrokerAddrs(), ","), "--timeout", "60000"}, args...)...)
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// logStates reads the log-start and log-end offsets of topic's partitions.
func logStates(t *testing.T, c *testcluster.Cluster, topic string, partitions int32) []PartitionState {
	t.Helper()
	client, err := sarama.NewClient(c.BrokerAddrs(), testcluster.SaramaConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, client.Close()) }()
	var states []PartitionState
	for p := range partitions {
		first, err := client.GetOffset(topic, p, sarama.OffsetOldest)
		require.NoError(t, err)
		end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		require.NoError(t, err)
		states = append(states, PartitionState{TopicPartition: TopicPartition{Topic: topic, Partition: p}, Earliest: first, Latest: end})
	}
	return states
}

// tableRows returns the rows of a reset-offsets table after its header,
// without blank lines and sorted (Kafka prints them in hash-map order).
// Kafka 3.9 prints the header and the rows without newlines between them
// (Kafka 4.0 fixed that; PrintPlan follows the fixed layout), so a long line
// is cut into rows of the table's fixed width, which holds while every value
// fits its column.
func tableRows(t *testing.T, table string) []string {
	t.Helper()
	const width = 30 + 1 + 30 + 1 + 10 + 1 + 15
	var rows []string
	header := false
	for _, l := range strings.Split(table, "\n") {
		for len(l) > width {
			rows = append(rows, l[:width])
			l = l[width:]
		}
		if strings.TrimSpace(l) != "" {
			rows = append(rows, l)
		}
	}
	if len(rows) > 0 {
		header = strings.HasPrefix(rows[0], "GROUP ")
		rows = rows[1:]
	}
	require.True(t, header, "no header in %q", table)
	slices.Sort(rows)
	return rows
}

func writeTemp(t *testing.T, name string, write func(*bytes.Buffer) error) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, write(&buf))
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path
}

// Kafka 3.9's --reset-offsets --from-file --dry-run reads the CSV WriteCSV
// writes (both forms), plans what PlanReset plans, clamping the same
// partitions, and prints the same table rows as PrintTable.
func TestKafka39ReadsOurCSV(t *testing.T) {
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	topic := testcluster.UniqueName("groupfiles-csv")
	require.NoError(t, c.CreateTopic(ctx, topic, 3, 1))
	_, err := c.Produce(ctx, topic, 30, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)
	require.NoError(t, c.DeleteRecords(topic, 0, 4))
	states := logStates(t, c, topic, 3)
	require.EqualValues(t, 4, states[0].Earliest)
	require.Positive(t, states[2].Latest)

	// Below the log-start on p0, above the log-end on p1, inside on p2.
	offs := []PartitionOffset{
		{TopicPartition: TopicPartition{Topic: topic, Partition: 0}, Offset: 1},
		{TopicPartition: TopicPartition{Topic: topic, Partition: 1}, Offset: 1_000_000},
		{TopicPartition: TopicPartition{Topic: topic, Partition: 2}, Offset: states[2].Latest - 1},
	}
	group := testcluster.UniqueName("groupfiles-g")
	plan, err := PlanReset(ctx, ResetSpec{Mode: ResetFromFile, File: FileForGroup(offs, group)}, time.Now(), states, nil)
	require.NoError(t, err)
	require.Len(t, Notes(plan), 2)
	var ours bytes.Buffer
	require.NoError(t, PrintTable(&ours, group, plan))

	t.Run("single group", func(t *testing.T) {
		file := writeTemp(t, "plan.csv", func(b *bytes.Buffer) error { return WriteCSV(b, offs) })
		stdout, stderr := kafka39GroupCommand(t, ctx, c, "--group", group, "--reset-offsets", "--from-file", file, "--dry-run")
		require.NotContains(t, stdout, "Error", stderr)
		require.Equal(t, tableRows(t, ours.String()), tableRows(t, stdout))
		require.Equal(t, 1, strings.Count(stderr, "is lower than earliest offset"), stderr)
		require.Equal(t, 1, strings.Count(stderr, "is higher than latest offset"), stderr)
	})

	t.Run("several groups", func(t *testing.T) {
		other := group + "-b"
		var multi []PartitionOffset
		for _, g := range []string{group, other} {
			for _, o := range offs {
				o.Group = g
				multi = append(multi, o)
			}
		}
		file := writeTemp(t, "plan.csv", func(b *bytes.Buffer) error { return WriteCSV(b, multi) })
		stdout, stderr := kafka39GroupCommand(t, ctx, c, "--group", group, "--group", other, "--reset-offsets", "--from-file", file, "--dry-run")
		require.NotContains(t, stdout, "Error", stderr)
		otherPlan, err := PlanReset(ctx, ResetSpec{Mode: ResetFromFile, File: FileForGroup(multi, other)}, time.Now(), states, nil)
		require.NoError(t, err)
		var otherTable bytes.Buffer
		require.NoError(t, PrintTable(&otherTable, other, otherPlan))
		want := append(tableRows(t, ours.String()), tableRows(t, otherTable.String())...)
		slices.Sort(want)
		require.Equal(t, want, tableRows(t, stdout))
	})

	t.Run("without committed offsets", func(t *testing.T) {
		// --to-current falls back to the log-end offset; --shift-by refuses.
		stdout, stderr := kafka39GroupCommand(t, ctx, c, "--group", group, "--topic", topic, "--reset-offsets", "--to-current", "--dry-run")
		require.NotContains(t, stdout, "Error", stderr)
		current, err := PlanReset(ctx, ResetSpec{Mode: ResetToCurrent}, time.Now(), states, nil)
		require.NoError(t, err)
		var table bytes.Buffer
		require.NoError(t, PrintTable(&table, group, current))
		require.Equal(t, tableRows(t, table.String()), tableRows(t, stdout))

		_, stderr, err = kafka39GroupCommandErr(t, ctx, c, "--group", group, "--topic", topic, "--reset-offsets", "--shift-by", "1", "--dry-run")
		require.Error(t, err)
		require.Contains(t, stderr, "no current committed offset")
		_, err = PlanReset(ctx, ResetSpec{Mode: ResetShiftBy, Shift: 1}, time.Now(), states, nil)
		require.ErrorIs(t, err, ErrNoCommittedOffset)
	})

	t.Run("export", func(t *testing.T) {
		// Kafka's --export of a plan is a CSV ReadCSV reads, equal line for
		// line to what WriteCSV writes for the same plan.
		stdout, stderr := kafka39GroupCommand(t, ctx, c, "--group", group, "--topic", topic, "--reset-offsets", "--to-latest", "--dry-run", "--export")
		require.NotContains(t, stdout, "Error", stderr)
		got, err := ReadCSV(strings.NewReader(stdout))
		require.NoError(t, err, stdout)
		latest, err := PlanReset(ctx, ResetSpec{Mode: ResetToLatest}, time.Now(), states, nil)
		require.NoError(t, err)
		var want []PartitionOffset
		for _, p := range latest {
			want = append(want, PartitionOffset{TopicPartition: p.TopicPartition, Offset: p.Target})
		}
		require.Equal(t, want, sortedPO(got))
		// Kafka's CSV writer (Jackson) quotes these topic names, Go's
		// encoding/csv does not: the same records either way.
		var ourCSV bytes.Buffer
		require.NoError(t, WriteCSV(&ourCSV, want))
		kafkaLines := strings.Fields(strings.ReplaceAll(stdout, `"`, ""))
		slices.Sort(kafkaLines)
		require.Equal(t, strings.Fields(ourCSV.String()), kafkaLines)
	})
}

// What Kafka 3.9's --to-datetime and --by-duration accept, ParseDatetime and
// ParseISODuration accept, and the other way round, for a few vectors.
func TestKafka39TimeArguments(t *testing.T) {
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := testcluster.UniqueName("groupfiles-time")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
	group := testcluster.UniqueName("groupfiles-g")
	for _, tc := range []struct {
		opt, arg string
		ok       bool
	}{
		{"--to-datetime", "2020-11-09T12:34:56.123", true},
		{"--to-datetime", "2020-11-09T12:34:56.123+01:00", true},
		{"--to-datetime", "2020-11-09T12:34:56.123-05", true},
		{"--to-datetime", "2020-11-09T12:34:56", false},
		{"--to-datetime", "2020-11-09T12:34:56.123456", false},
		{"--by-duration", "PT0.5S", true},
		{"--by-duration", "P1DT2H", true},
		{"--by-duration", "P1M", false},
	} {
		t.Run(tc.opt+"="+tc.arg, func(t *testing.T) {
			var err error
			if tc.opt == "--to-datetime" {
				_, err = ParseDatetime(tc.arg)
			} else {
				_, err = ParseISODuration(tc.arg)
			}
			require.Equal(t, tc.ok, err == nil, "ours: %v", err)
			stdout, stderr := kafka39GroupCommand(t, ctx, c, "--group", group, "--topic", topic, "--reset-offsets", tc.opt, tc.arg, "--dry-run")
			kafkaOK := strings.Contains(stdout, "NEW-OFFSET") && !strings.Contains(stdout, "Error")
			require.Equal(t, tc.ok, kafkaOK, "Kafka:\n%s\n%s", stdout, stderr)
		})
	}
}

// Kafka 1.1.1's ImportZkOffsets reads the file WriteZkOffsets writes, and
// its ExportZkOffsets writes back the same lines, which ReadZkOffsets reads.
func TestKafka111ZkOffsetsTools(t *testing.T) {
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	group := testcluster.UniqueName("groupfiles-zk")
	var offs []PartitionOffset
	for _, topic := range []string{"orders", "payments.eu"} {
		for p := range int32(12) {
			offs = append(offs, PartitionOffset{Group: group, TopicPartition: TopicPartition{Topic: topic, Partition: p}, Offset: int64(p) * 1_000_000_007})
		}
	}
	in := writeTemp(t, "in.txt", func(b *bytes.Buffer) error { return WriteZkOffsets(b, offs) })
	_, err := testcluster.RunOldTool(ctx, "kafka.tools.ImportZkOffsets", "--zkconnect", c.ZKConnect(), "--input-file", in)
	require.NoError(t, err)

	out := filepath.Join(t.TempDir(), "out.txt")
	_, err = testcluster.RunOldTool(ctx, "kafka.tools.ExportZkOffsets", "--zkconnect", c.ZKConnect(), "--group", group, "--output-file", out)
	require.NoError(t, err)
	exported, err := os.ReadFile(out)
	require.NoError(t, err)

	got, err := ReadZkOffsets(bytes.NewReader(exported))
	require.NoError(t, err, "%s", exported)
	require.Equal(t, sortedPO(offs), sortedPO(got))

	ours, err := os.ReadFile(in)
	require.NoError(t, err)
	kafkaLines := strings.Split(strings.TrimSuffix(string(exported), "\n"), "\n")
	slices.Sort(kafkaLines)
	ourLines := strings.Split(strings.TrimSuffix(string(ours), "\n"), "\n")
	slices.Sort(ourLines)
	require.Equal(t, ourLines, kafkaLines, fmt.Sprintf("Kafka's export:\n%s", exported))
}
