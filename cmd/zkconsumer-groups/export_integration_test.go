package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestExportRoundTrip: --export writes Kafka's reset CSV (or the zk
// format) of a real group's offsets; after the offsets moved, --reset-offsets
// --from-file with that file (either format) brings them back.
func TestExportRoundTrip(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := session(t, c)
	topic := newTopic(t, c, 3, 60)
	group := testcluster.UniqueName("g-export")
	m := startMember(t, c, group, topic, 1)
	m.consume(t, 25)
	m.stop(t)
	want := committed(t, zk, group, topic, 3)

	out := runOK(t, "--zookeeper", c.ZKConnect(), "--export", "--group", group)
	var lines []string
	for p, off := range want {
		if off >= 0 {
			lines = append(lines, topic+","+strconv.Itoa(p)+","+strconv.FormatInt(off, 10))
		}
	}
	require.Equal(t, strings.Join(lines, "\n")+"\n", out, "topic,partition,offset sorted")

	dir := t.TempDir()
	for _, format := range []string{"csv", "zk"} {
		file := filepath.Join(dir, "offsets."+format)
		r := runTool(t, "--zookeeper", c.ZKConnect(), "--export", "--group", group, "--format", format, "--output-file", file)
		require.Equal(t, 0, r.code)
		require.Empty(t, r.stdout)
		reset(t, c, group, "--all-topics", "--to-latest")
		require.Equal(t, []int64{20, 20, 20}, committed(t, zk, group, topic, 3))
		reset(t, c, group, "--from-file", file)
		got := committed(t, zk, group, topic, 3)
		for p := range want {
			if want[p] >= 0 {
				require.Equal(t, want[p], got[p], "%s format, partition %d", format, p)
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "offsets.zk"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(data), "/consumers/"+group+"/offsets/"+topic+"/"), "zk format:\n%s", data)
}

// TestZkFormatInteropWithKafka111: our --export --format zk is read by
// Kafka 1.1.1's kafka.tools.ImportZkOffsets, and a file written by its
// ExportZkOffsets is read by our --reset-offsets --from-file.
func TestZkFormatInteropWithKafka111(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := session(t, c)
	topic := newTopic(t, c, 2, 40)
	src, dst := testcluster.UniqueName("g-zkfmt-src"), testcluster.UniqueName("g-zkfmt-dst")
	fakeGroup(t, zk, src, topic, 7, 13)
	fakeGroup(t, zk, dst, topic, 0, 0)
	dir := t.TempDir()

	// Ours -> Kafka's ImportZkOffsets, into another group by renaming.
	ours := filepath.Join(dir, "ours.zk")
	runOK(t, "--zookeeper", c.ZKConnect(), "--export", "--group", src, "--format", "zk", "--output-file", ours)
	data, err := os.ReadFile(ours)
	require.NoError(t, err)
	renamed := filepath.Join(dir, "renamed.zk")
	require.NoError(t, os.WriteFile(renamed, []byte(strings.ReplaceAll(string(data), "/consumers/"+src+"/", "/consumers/"+dst+"/")), 0o644))
	_, err = testcluster.RunOldTool(testwait.Context(t, 3*time.Minute), "kafka.tools.ImportZkOffsets", "--zkconnect", c.ZKConnect(), "--input-file", renamed)
	require.NoError(t, err)
	require.Equal(t, []int64{7, 13}, committed(t, zk, dst, topic, 2), "Kafka imported our file")

	// Kafka's ExportZkOffsets -> ours.
	theirs := filepath.Join(dir, "theirs.zk")
	_, err = testcluster.RunOldTool(testwait.Context(t, 3*time.Minute), "kafka.tools.ExportZkOffsets", "--zkconnect", c.ZKConnect(), "--group", src, "--output-file", theirs)
	require.NoError(t, err)
	reset(t, c, src, "--all-topics", "--to-earliest")
	require.Equal(t, []int64{0, 0}, committed(t, zk, src, topic, 2))
	reset(t, c, src, "--from-file", theirs)
	require.Equal(t, []int64{7, 13}, committed(t, zk, src, topic, 2), "we imported Kafka's file")
}

// TestExportErrors: unknown group and garbage offsets fail, and no output
// file is left behind.
func TestExportErrors(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := session(t, c)
	topic := newTopic(t, c, 2, 0)
	group := testcluster.UniqueName("g-export-bad")
	fakeGroup(t, zk, group, topic, 1, 2)
	writeNode(t, zk, "/consumers/"+group+"/offsets/"+topic+"/1", "not-a-number")
	file := filepath.Join(t.TempDir(), "out.csv")
	r := runTool(t, "--zookeeper", c.ZKConnect(), "--export", "--group", group, "--output-file", file)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "not-a-number")
	require.NoFileExists(t, file)
	r = runTool(t, "--zookeeper", c.ZKConnect(), "--export", "--group", "no-such-"+group, "--output-file", file)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "unknown group")
	require.NoFileExists(t, file)
}

// TestCSVInteropWithKafka111: the CSV of our --export is what Kafka's
// kafka-consumer-groups.sh --reset-offsets --from-file reads (Kafka 1.1.1's,
// on a Kafka-based group, dry run), and the CSV its --reset-offsets
// --export prints is what our --from-file reads.
func TestCSVInteropWithKafka111(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := session(t, c)
	topic := newTopic(t, c, 3, 30)
	group := testcluster.UniqueName("g-csv")
	fakeGroup(t, zk, group, topic, 2, 5, 9)
	file := filepath.Join(t.TempDir(), "offsets.csv")
	runOK(t, "--zookeeper", c.ZKConnect(), "--export", "--group", group, "--output-file", file)

	out, err := testcluster.RunOldTool(testwait.Context(t, 3*time.Minute), "kafka.admin.ConsumerGroupCommand",
		"--bootstrap-server", strings.Join(c.BrokerAddrs(), ","), "--reset-offsets", "--group", group+"-kafka", "--from-file", file, "--dry-run")
	require.NoError(t, err)
	t.Logf("Kafka 1.1.1 --reset-offsets --from-file:\n%s", out)
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == topic {
			got[f[1]] = f[2]
		}
	}
	require.Equal(t, map[string]string{"0": "2", "1": "5", "2": "9"}, got, "Kafka read our CSV")

	out, err = testcluster.RunOldTool(testwait.Context(t, 3*time.Minute), "kafka.admin.ConsumerGroupCommand",
		"--bootstrap-server", strings.Join(c.BrokerAddrs(), ","), "--reset-offsets", "--group", group+"-kafka", "--topic", topic, "--to-offset", "7", "--export", "--dry-run")
	require.NoError(t, err)
	t.Logf("Kafka 1.1.1 --reset-offsets --export:\n%s", out)
	theirs := filepath.Join(t.TempDir(), "theirs.csv")
	require.NoError(t, os.WriteFile(theirs, []byte(out), 0o644))
	reset(t, c, group, "--from-file", theirs)
	require.Equal(t, []int64{7, 7, 7}, committed(t, zk, group, topic, 3), "we read Kafka's CSV")
}
