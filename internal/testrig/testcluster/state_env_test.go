package testcluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEnvFileReachesPrograms: `source .cache/cluster/env` and then a
// program (go run ./examples/simple, as the README says) sees the
// settings: the env file exports them (with plain assignments the program
// got an empty ZOOKEEPER_CONNECT).
func TestEnvFileReachesPrograms(t *testing.T) {
	dir := t.TempDir()
	zkEnv, kraftEnv := filepath.Join(dir, "env"), filepath.Join(dir, "kraft-env")
	require.NoError(t, os.WriteFile(zkEnv, []byte(State{ZKConnect: "127.0.0.1:1/kafka", Brokers: []string{"127.0.0.1:2"}}.EnvLines()), 0o644))
	require.NoError(t, os.WriteFile(kraftEnv, []byte(State{KRaft: true, Brokers: []string{"127.0.0.1:3"}}.EnvLines()), 0o644))
	// A child of the shell that sourced both files prints what it got.
	script := `. "$1" && . "$2" && sh -c 'echo "$ZOOKEEPER_CONNECT|$KAFKA_BROKERS|$KRAFT_BROKERS"'`
	cmd := exec.Command("sh", "-c", script, "sh", zkEnv, kraftEnv)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "127.0.0.1:1/kafka|127.0.0.1:2|127.0.0.1:3\n", string(out))
}
