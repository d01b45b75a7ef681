package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/cmdhelp"
)

// TestHelpInKafkasLayout: --help is Kafka's two-column table, and each
// default appears once (it used to read "(default: unlimited) (default
// -1)").
func TestHelpInKafkasLayout(t *testing.T) {
	r := runQuick(t, "--help")
	require.Equal(t, 0, r.code)
	entries, problems := cmdhelp.Problems(r.stdout, newFlagSet(nil))
	require.Empty(t, problems)
	require.Contains(t, entries["--max-messages <number>"], "(default: no limit)")
	require.NotContains(t, entries["--max-messages <number>"], "-1")
	require.Contains(t, entries["--timeout-ms <milliseconds>"], "(default: no timeout)")
	require.Contains(t, entries["--offset <offset>"], "(default: latest)")
}

// TestVersionFlag: --version prints the tool's name and version on
// stdout and exits 0, whatever else is given.
func TestVersionFlag(t *testing.T) {
	r := runQuick(t, "--version")
	require.Equal(t, 0, r.code)
	require.Equal(t, cmdhelp.Version("zkconsumer-console-consumer")+"\n", r.stdout)
	require.Empty(t, r.stderr)
	r = runQuick(t, "--zookeeper", "127.0.0.1:1", "--topic", "t", "--version")
	require.Equal(t, 0, r.code)
	require.True(t, strings.HasPrefix(r.stdout, "zkconsumer-console-consumer "), r.stdout)
}
