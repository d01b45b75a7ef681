package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// listStates parses the output of --list --state into group -> state,
// checking its shape: a GROUP STATE header, and STATE starting in the same
// column on every line.
func listStates(t *testing.T, out string) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.Regexp(t, `^GROUP {20,}STATE +$`, lines[0])
	col := strings.Index(lines[0], "STATE")
	states := map[string]string{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		require.Len(t, f, 2, "line %q", l)
		require.Equal(t, col, strings.Index(l, f[1]), "STATE column of %q", l)
		states[f[0]] = f[1]
	}
	return states
}

// TestListStateAndVerbose: --list --state shows each group with the state
// --describe --state gives it (a running member's group Stable, a group
// without members Empty, a member without partitions Rebalancing, the
// first group Empty once its member stopped), and filters by states
// without regard to case. --describe --verbose adds HOST and THREAD (the
// owner znode) to the offsets view and ASSIGNMENT to --members.
func TestListStateAndVerbose(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := session(t, c)
	topic := newTopic(t, c, 2, 20)
	stable := testcluster.UniqueName("g-state-stable")
	empty := testcluster.UniqueName("g-state-empty")
	rebalancing := testcluster.UniqueName("g-state-rebalancing")

	m := startMember(t, c, stable, topic, 2)
	waitOwned(t, zk, stable, topic, 2)
	m.consume(t, 6)
	fakeGroup(t, zk, empty, topic, 3, 4)
	fakeGroup(t, zk, rebalancing, topic, 1, 1)
	fakeMember(t, zk, rebalancing, rebalancing+"_idle", topic)
	t.Cleanup(func() {
		_ = zk.Delete(context.Background(), zkutil.ConsumerIDPath(rebalancing, rebalancing+"_idle"), -1)
	})

	states := listStates(t, runOK(t, "--zookeeper", c.ZKConnect(), "--list", "--state"))
	require.Equal(t, "Stable", states[stable])
	require.Equal(t, "Empty", states[empty])
	require.Equal(t, "Rebalancing", states[rebalancing])
	for _, g := range []string{stable, empty, rebalancing} {
		out := runOK(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", g, "--state")
		require.Regexp(t, "(?m)^"+regexp.QuoteMeta(g)+`\s+`+states[g]+`\s`, out, "--describe --state agrees")
	}

	only := listStates(t, runOK(t, "--zookeeper", c.ZKConnect(), "--list", "--state", "stable"))
	require.Contains(t, only, stable)
	require.NotContains(t, only, empty)
	require.NotContains(t, only, rebalancing)
	for _, s := range only {
		require.Equal(t, "Stable", s)
	}
	two := listStates(t, runOK(t, "--zookeeper", c.ZKConnect(), "--list", "--state=Empty,REBALANCING"))
	require.Contains(t, two, empty)
	require.Contains(t, two, rebalancing)
	require.NotContains(t, two, stable)

	// --verbose: the offsets view gains HOST and THREAD, the owner znode.
	id := m.conn.ConsumerID()
	plain := runOK(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", stable)
	require.Len(t, describeRows(plain), 2, "the plain view keeps its six columns")
	verbose := runOK(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", stable, "--verbose")
	lines := strings.Split(strings.TrimSpace(verbose), "\n")
	require.Equal(t, []string{"TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "THREAD"}, strings.Fields(lines[0]))
	require.Len(t, lines, 3)
	host, _, ok := strings.Cut(strings.TrimPrefix(id, stable+"_"), "-")
	require.True(t, ok, "a generated consumer id names its host: %s", id)
	plainRows := describeRows(plain)
	for i, l := range lines[1:] {
		f := strings.Fields(l)
		require.Len(t, f, 8, l)
		require.Equal(t, plainRows[i][:], f[:6], "the first six columns are the plain view's")
		require.Equal(t, id, f[5])
		require.Equal(t, host, f[6])
		thread, _, err := zk.Get(context.Background(), zkutil.OwnerPath(stable, topic, int32(i)))
		require.NoError(t, err)
		require.Equal(t, string(thread), f[7], "THREAD is the owner znode")
	}
	members := runOK(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", stable, "--members", "--verbose")
	require.Regexp(t, `(?m)^CONSUMER-ID\s+HOST\s+#PARTITIONS\s+STREAMS\s+PATTERN\s+REGISTERED\s+ASSIGNMENT$`, members)
	require.Regexp(t, "(?m)^"+regexp.QuoteMeta(id)+`\s.*\s`+regexp.QuoteMeta(topic+"(0,1)")+"$", members)
	require.Equal(t, runOK(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", stable, "--state"),
		runOK(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", stable, "--state", "--verbose"),
		"--state has nothing more to show, as in Kafka 3.9")

	m.stop(t)
	require.Eventually(t, func() bool {
		return listStates(t, runOK(t, "--zookeeper", c.ZKConnect(), "--list", "--state", "Empty"))[stable] == "Empty"
	}, 30*time.Second, 200*time.Millisecond, "the group is Empty once its member left")
}
