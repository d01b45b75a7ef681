package groups

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	require.Equal(t, string(want), string(got))
}

func TestPrintPlanGolden(t *testing.T) {
	plan := []PlannedOffset{
		{TopicPartition: TopicPartition{Topic: "orders", Partition: 0}, Current: 10, HasCurrent: true, Target: 0},
		{TopicPartition: TopicPartition{Topic: "orders", Partition: 1}, Target: 120, Note: "offset 500 is above the log-end offset 120; using 120"},
		{TopicPartition: TopicPartition{Topic: "payments.eu", Partition: 12}, Current: 7, HasCurrent: true, Target: 9223372036854775807},
	}
	var buf bytes.Buffer
	require.NoError(t, PrintPlan(&buf, "billing", plan))
	golden(t, "plan.txt", buf.Bytes())

	buf.Reset()
	require.NoError(t, PrintTable(&buf, "billing", plan))
	table := buf.String()
	require.True(t, strings.HasPrefix(string(mustRead(t, "plan.txt")), table), "the table is PrintPlan's prefix")
	require.NotContains(t, table, "Warn")

	require.Equal(t, []string{"orders-1: offset 500 is above the log-end offset 120; using 120"}, Notes(plan))
}

func TestPrintPlanLayout(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, PrintPlan(&buf, "g", []PlannedOffset{{TopicPartition: TopicPartition{Topic: "t", Partition: 3}, Target: 42}}))
	want := "\n" +
		"GROUP" + strings.Repeat(" ", 26) + "TOPIC" + strings.Repeat(" ", 26) + "PARTITION" + strings.Repeat(" ", 2) + "NEW-OFFSET     \n" +
		"g" + strings.Repeat(" ", 30) + "t" + strings.Repeat(" ", 30) + "3" + strings.Repeat(" ", 10) + "42" + strings.Repeat(" ", 13) + "\n"
	require.Equal(t, want, buf.String())
}

func TestPrintPlanEmpty(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, PrintPlan(&buf, "g", nil))
	require.Equal(t, "\n", buf.String(), "Kafka prints no header for an empty plan, just the final newline")
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestPrintPlanWriteError(t *testing.T) {
	require.ErrorIs(t, PrintPlan(failingWriter{}, "g", nil), os.ErrClosed)
	require.ErrorIs(t, PrintTable(failingWriter{}, "g", nil), os.ErrClosed)
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}
