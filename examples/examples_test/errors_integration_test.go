package examples_test

import (
	"os"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestExamplesReportErrors: simple and manual-commit print what Errors()
// reports, here a topic that does not exist, once (the connector, logging
// through slog.Default(), does not print it again), and so does wildcard,
// here an unreadable registration in its group; each still exits cleanly
// on SIGINT.
func TestExamplesReportErrors(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	for _, name := range []string{"simple", "manual-commit"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := testwait.Context(t, 2*time.Minute)
			bin := build(t, name)
			topic, group := testcluster.UniqueName("smoke-missing"), testcluster.UniqueName("smoke-missing")
			p := start(t, ctx, bin, "-zookeeper", c.ZKConnect(), "-topic", topic, "-group", group)
			missing := connector.ErrTopicMissing.Error() + ": " + topic
			want := "consumer: " + missing
			testwait.WaitFor(t, time.Minute, func() bool { return hasLogLine(p, want) },
				"%q on stderr; stderr:\n%s", want, &p.stderr)
			p.interrupt(t)
			// Printed once: the connector logs (through slog.Default(),
			// Logger being nil) what it sends on Errors at DEBUG only.
			for line := range strings.SplitSeq(p.stderr.String(), "\n") {
				if strings.Contains(line, missing) {
					require.True(t, strings.HasPrefix(logPrefix.ReplaceAllString(line, ""), want),
						"the error printed again, not by the example: %q; stderr:\n%s", line, &p.stderr)
				}
			}
		})
	}
	t.Run("wildcard", func(t *testing.T) {
		t.Parallel()
		ctx := testwait.Context(t, 2*time.Minute)
		bin := build(t, "wildcard")
		base, group := testcluster.UniqueName("smoke-broken"), testcluster.UniqueName("smoke-broken")
		require.NoError(t, c.CreateTopic(ctx, base+".a", 1, 1))
		s, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: c.ZKConnect()})
		require.NoError(t, err)
		defer s.Close()
		path := zkutil.ConsumerIDPath(group, "broken")
		require.NoError(t, s.EnsurePath(ctx, pathpkg.Dir(path)))
		require.NoError(t, s.CreatePersistent(ctx, path, []byte("not a registration")))

		p := start(t, ctx, bin, "-zookeeper", c.ZKConnect(), "-whitelist", regexp.QuoteMeta(base)+`\..*`, "-group", group)
		testwait.WaitFor(t, time.Minute, func() bool { return hasLogLine(p, "consumer: ") && strings.Contains(p.stderr.String(), path) },
			"the unreadable registration reported on stderr; stderr:\n%s", &p.stderr)
		p.interrupt(t)
	})
}

// hasLogLine reports whether the example logged a line starting with
// prefix (after the log's time stamp).
func hasLogLine(p *proc, prefix string) bool {
	for line := range strings.SplitSeq(p.stderr.String(), "\n") {
		if strings.HasPrefix(logPrefix.ReplaceAllString(line, ""), prefix) {
			return true
		}
	}
	return false
}

// TestEveryExampleDrainsErrors: every example program, the Prometheus
// plugin's included, ranges over its connector's Errors(), so that what
// the connector reports outside the streams (a failed rebalance, a lost
// session, a failed commit) is never silent in code users copy.
func TestEveryExampleDrainsErrors(t *testing.T) {
	mains, err := filepath.Glob(filepath.Join("..", "*", "main.go"))
	require.NoError(t, err)
	mains = append(mains, filepath.Join("..", "..", "plugin", "prometheus", "example", "main.go"))
	require.Greater(t, len(mains), 8, "the glob missed the examples")
	drains := regexp.MustCompile(`for [^\n]*range [^\n]*\.Errors\(\)`)
	for _, path := range mains {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Regexp(t, drains, string(src), "%s does not range over Errors()", path)
	}
}
