package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/cmdhelp"
)

// TestHelpShowsEachDefaultOnce: --help is Kafka's two-column table, every
// option is in it, and each default appears once, where there is one.
func TestHelpShowsEachDefaultOnce(t *testing.T) {
	r := runTool(t, "--help")
	require.Equal(t, 0, r.code)
	entries, problems := cmdhelp.Problems(r.stdout, newFlagSet(&options{}))
	require.Empty(t, problems)
	require.Contains(t, entries["--timeout <timeout>"], "(default: 30s)")
	require.Contains(t, entries["--format <format>"], "(default: csv)")
	require.Contains(t, entries, "--state [<states>]")
	require.Contains(t, entries, "--delete-offsets")
	require.Contains(t, entries, "--verbose")
	require.Contains(t, entries, "--version")
}

// TestVersionFlag: --version prints the tool's name and version on
// stdout and exits 0, without --zookeeper or an action.
func TestVersionFlag(t *testing.T) {
	r := runTool(t, "--version")
	require.Equal(t, 0, r.code)
	require.Equal(t, cmdhelp.Version("zkconsumer-groups")+"\n", r.stdout)
	require.Empty(t, r.stderr)
}

// TestNewOptionsParse: --list --state takes its states after a space or
// an "=", or none; the new options' misuses are usage errors (exit 2).
func TestNewOptionsParse(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		filter string
	}{
		{[]string{"--zookeeper", "x:1", "--list", "--state"}, ""},
		{[]string{"--zookeeper", "x:1", "--list", "--state", "stable,EMPTY"}, "stable,EMPTY"},
		{[]string{"--zookeeper", "x:1", "--list", "--state=Rebalancing"}, "Rebalancing"},
		{[]string{"--zookeeper", "x:1", "--state", "Empty", "--list"}, "Empty"},
		{[]string{"--zookeeper", "x:1", "--state", "--list"}, ""},
	} {
		o, _, err := parseArgs(tc.args)
		require.NoError(t, err, "%v", tc.args)
		require.True(t, o.List && o.State, "%v", tc.args)
		require.Equal(t, tc.filter, o.StateFilter, "%v", tc.args)
	}
	o, _, err := parseArgs([]string{"--zookeeper", "x:1", "--describe", "--group", "g", "--members", "--verbose"})
	require.NoError(t, err)
	require.True(t, o.Verbose && o.Members)
	o, _, err = parseArgs([]string{"--bootstrap-server", "b:9092", "--delete-offsets", "--group", "g", "--topic", "t:0,1", "--topic", "u"})
	require.NoError(t, err, "--delete-offsets with --bootstrap-server needs no --zookeeper")
	require.Equal(t, []string{"t:0,1", "u"}, o.Topics)

	for _, args := range [][]string{
		{"--zookeeper", "x:1", "--list", "--state", "Dead"},
		{"--zookeeper", "x:1", "--list", "--state", "Stable,bogus"},
		{"--zookeeper", "x:1", "--describe", "--group", "g", "--state", "Stable"},
		{"--zookeeper", "x:1", "--list", "--verbose"},
		{"--zookeeper", "x:1", "--delete", "--group", "g", "--verbose"},
		{"--zookeeper", "x:1", "--delete-offsets", "--group", "g"},
		{"--zookeeper", "x:1", "--delete-offsets", "--topic", "t"},
		{"--zookeeper", "x:1", "--delete-offsets", "--group", "g", "--group", "h", "--topic", "t"},
		{"--zookeeper", "x:1", "--delete-offsets", "--group", "g", "--topic", "t:x"},
		{"--zookeeper", "x:1", "--bootstrap-server", "b:9092", "--delete-offsets", "--group", "g", "--topic", "t"},
		{"--bootstrap-server", "b:9092", "--list"},
		{"--zookeeper", "x:1", "--list", "--bootstrap-server", "b:9092"},
		{"--bootstrap-server", "b:9092", "--describe", "--group", "g"},
	} {
		r := runTool(t, args...)
		require.Equal(t, 2, r.code, "%v", args)
		require.Contains(t, r.stderr, "Error: ", "%v", args)
		require.Empty(t, r.stdout, "%v", args)
	}
}
