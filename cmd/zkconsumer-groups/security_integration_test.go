package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// writeCommandConfig writes a --command-config file.
func writeCommandConfig(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "client.properties")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return path
}

// TestCommandConfigSecuresBrokers: with --command-config, --describe reads
// log end offsets over SASL_SSL and --migrate-to-kafka commits through a
// SASL_SSL bootstrap server; a wrong password fails naming the setting.
func TestCommandConfigSecuresBrokers(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedSecure(t)
	sec := c.Security()
	topic := newTopic(t, c, 2, 20)
	group := testcluster.UniqueName("g-seccmd")
	s := session(t, c)
	for p := int32(0); p < 2; p++ {
		require.NoError(t, s.SetOrCreate(context.Background(), zkutil.OffsetPath(group, topic, p), []byte(strconv.Itoa(3))))
	}
	good := writeCommandConfig(t,
		"security.protocol=SASL_SSL",
		"ssl.truststore.location="+sec.CAFile,
		"ssl.truststore.type=PEM",
		"sasl.mechanism=SCRAM-SHA-256",
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="`+sec.User+`" password="`+sec.Password+`";`,
		"client.id=ignored",
	)
	r := runTool(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", group, "--command-config", good)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "client.id is not a security setting")
	require.Regexp(t, topic+`\s+0\s+3\s+10\s+7`, r.stdout)

	out := runOK(t, "--zookeeper", c.ZKConnect(), "--migrate-to-kafka", "--group", group,
		"--bootstrap-server", sec.Listener(testcluster.ListenerSASLSSL, 0), "--command-config", good, "--execute")
	require.NotEmpty(t, out)

	bad := writeCommandConfig(t,
		"security.protocol=SASL_SSL",
		"ssl.ca.location="+sec.CAFile,
		"sasl.mechanism=SCRAM-SHA-512",
		"sasl.username="+sec.User,
		"sasl.password=wrong-password",
	)
	r = runTool(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", group, "--command-config", bad)
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr+r.stdout, "sasl.username and sasl.password")
	require.NotContains(t, r.stderr+r.stdout, "wrong-password")

	r = runTool(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", group, "--command-config", filepath.Join(t.TempDir(), "missing"))
	require.Equal(t, exitError, r.code)
	require.Contains(t, r.stderr, "--command-config")
}
