package main

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
)

// TestUsageErrors: bad combinations of options exit 2 with a message.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--list"}, // no --zookeeper
		{"--zookeeper", "x:1", "--list", "--describe"},
		{"--zookeeper", "x:1", "--describe"},
		{"--zookeeper", "x:1", "--describe", "--group", "g", "--all-groups"},
		{"--zookeeper", "x:1", "--reset-offsets", "--group", "g", "--all-topics"},
		{"--zookeeper", "x:1", "--reset-offsets", "--group", "g", "--to-earliest"},
		{"--zookeeper", "x:1", "--reset-offsets", "--group", "g", "--all-topics", "--to-earliest", "--to-latest"},
		{"--zookeeper", "x:1", "--reset-offsets", "--group", "g", "--all-topics", "--to-earliest", "--execute", "--dry-run"},
		{"--zookeeper", "x:1", "--list", "--execute"},
		{"--zookeeper", "x:1", "--export", "--group", "g", "--format", "xml"},
		{"--zookeeper", "x:1", "--migrate-to-kafka", "--group", "g"},
		{"--zookeeper", "x:1", "--list", "--timeout", "soon"},
		{"--zookeeper", "x:1", "--list", "--bogus"},
		// Issue 19: bad values of reset options exited 1, after trying
		// ZooKeeper, where other bad values exit 2.
		{"--zookeeper", "x:1", "--timeout", "1s", "--reset-offsets", "--group", "g", "--all-topics", "--to-datetime", "yesterday"},
		{"--zookeeper", "x:1", "--timeout", "1s", "--reset-offsets", "--group", "g", "--all-topics", "--to-datetime", "2024-13-01T00:00:00.000"},
		{"--zookeeper", "x:1", "--timeout", "1s", "--reset-offsets", "--group", "g", "--all-topics", "--by-duration", "soon"},
		{"--zookeeper", "x:1", "--timeout", "1s", "--reset-offsets", "--group", "g", "--topic", "t:one", "--to-earliest"},
		{"--zookeeper", "x:1", "--timeout", "1s", "--reset-offsets", "--group", "g", "--topic", ":0", "--to-earliest"},
	} {
		r := runTool(t, args...)
		require.Equal(t, 2, r.code, "%v", args)
		require.Contains(t, r.stderr, "Error: ", "%v", args)
		require.Empty(t, r.stdout, "%v", args)
	}
	r := runTool(t, "--help")
	require.Equal(t, 0, r.code)
	for _, opt := range []string{"--zookeeper", "--list", "--describe", "--members", "--state", "--all-groups", "--delete",
		"--reset-offsets", "--to-earliest", "--to-latest", "--to-current", "--to-offset", "--shift-by", "--to-datetime",
		"--by-duration", "--from-file", "--dry-run", "--execute", "--export", "--format", "--output-file",
		"--migrate-to-kafka", "--bootstrap-server", "--force", "--timeout", "--topic", "--group", "--all-topics"} {
		require.Contains(t, r.stdout, "\n"+opt+" ", "help lists %s", opt)
	}
}

// TestUnknownGroupAndTopic: describing an unknown group fails with Kafka's
// message and exit code 1.
func TestUnknownGroupAndTopic(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	r := runTool(t, "--zookeeper", c.ZKConnect(), "--describe", "--group", "no-such-group-"+testcluster.UniqueName("x"))
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "does not exist")
	require.Empty(t, r.stdout)
}

// TestUnreachableZooKeeper: a ZooKeeper that does not answer fails within
// --timeout, and a missing chroot is named.
func TestUnreachableZooKeeper(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	start := time.Now()
	r := runTool(t, "--zookeeper", addr, "--list", "--timeout", "2s")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "cannot reach ZooKeeper")
	require.Contains(t, r.stderr, "connection refused", "names the cause")
	require.Less(t, time.Since(start), 10*time.Second, "bounded by --timeout")

	c := testcluster.Shared(t)
	r = runTool(t, "--zookeeper", c.ZKServer()+"/no-such-chroot-"+testcluster.UniqueName("x"), "--list")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "chroot does not exist")
}

// TestGarbageAndChroot: a cluster laid out by hand under a chroot of its
// own, with a leader whose broker does not answer, a garbage offset, a
// garbage partition name, a garbage registration and a member that owns
// nothing: --describe prints what it can, warns about the rest and exits
// 1, within the timeout; --members marks the garbage registration.
func TestGarbageAndChroot(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	chroot := "/" + testcluster.UniqueName("groups-chroot")
	connect := c.ZKServer() + chroot
	zk, err := openRaw(c.ZKServer())
	require.NoError(t, err)
	t.Cleanup(func() { _ = zk.Close() })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	writeNode(t, zk, chroot+"/brokers/ids/99", fmt.Sprintf(`{"version":4,"host":"127.0.0.1","port":%d,"endpoints":["PLAINTEXT://127.0.0.1:%d"],"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"jmx_port":-1,"timestamp":"1"}`, port, port))
	writeNode(t, zk, chroot+"/brokers/topics/t", `{"version":1,"partitions":{"0":[99],"1":[99]}}`)
	writeNode(t, zk, chroot+"/brokers/topics/t/partitions/0/state", `{"controller_epoch":1,"leader":99,"version":1,"leader_epoch":0,"isr":[99]}`)
	writeNode(t, zk, chroot+"/brokers/topics/t/partitions/1/state", `{"controller_epoch":1,"leader":-1,"version":1,"leader_epoch":0,"isr":[]}`)
	g := chroot + "/consumers/g"
	writeNode(t, zk, g+"/offsets/t/0", "12")
	writeNode(t, zk, g+"/offsets/t/1", "twelve")
	writeNode(t, zk, g+"/offsets/t/x", "1")
	writeNode(t, zk, g+"/ids/g_idle", `{"version":1,"subscription":{"t":1},"pattern":"static","timestamp":"1"}`)
	writeNode(t, zk, g+"/ids/g_garbage", `{"version":1,"subscription":`)
	require.NoError(t, zk.EnsurePath(testwait.Context(t, time.Minute), g+"/owners/t"))

	start := time.Now()
	r := runTool(t, "--zookeeper", connect, "--describe", "--group", "g", "--timeout", "3s")
	require.Less(t, time.Since(start), 30*time.Second)
	require.Equal(t, 1, r.code)
	rows := describeRows(r.stdout)
	require.Contains(t, rows, [6]string{"t", "0", "12", "-", "-", "-"})
	require.Contains(t, rows, [6]string{"t", "1", "-", "-", "-", "-"})
	require.Contains(t, rows, [6]string{"-", "-", "-", "-", "-", "g_idle"})
	for _, want := range []string{"/consumers/g/offsets/t/1", "twelve", "/consumers/g/offsets/t/x", "g_garbage", "broker 99", "no available leader"} {
		require.Contains(t, r.stderr, want)
	}

	r = runTool(t, "--zookeeper", connect, "--describe", "--group", "g", "--members", "--timeout", "3s")
	require.Equal(t, 1, r.code)
	require.Regexp(t, `g_garbage\s+-\s+0\s+-\s+unreadable`, r.stdout)
	r = runTool(t, "--zookeeper", connect, "--describe", "--group", "g", "--state", "--timeout", "3s")
	require.Contains(t, r.stdout, "Rebalancing")

	// A leader that accepts connections but never answers: describe and
	// reset give up within the timeout, and the reset writes nothing.
	proxy, err := testcluster.NewProxy(c.BrokerAddrs()[0])
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	proxy.SetMode(testcluster.Blackhole)
	host, pport, err := net.SplitHostPort(proxy.Addr())
	require.NoError(t, err)
	writeNode(t, zk, chroot+"/brokers/ids/98", fmt.Sprintf(`{"version":4,"host":"%s","port":%s,"endpoints":["PLAINTEXT://%s:%s"],"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"jmx_port":-1,"timestamp":"1"}`, host, pport, host, pport))
	writeNode(t, zk, chroot+"/brokers/topics/u", `{"version":1,"partitions":{"0":[98]}}`)
	writeNode(t, zk, chroot+"/brokers/topics/u/partitions/0/state", `{"controller_epoch":1,"leader":98,"version":1,"leader_epoch":0,"isr":[98]}`)
	writeNode(t, zk, g+"/offsets/u/0", "5")
	require.NoError(t, zk.Delete(testwait.Context(t, time.Minute), g+"/ids/g_idle", -1))
	require.NoError(t, zk.Delete(testwait.Context(t, time.Minute), g+"/ids/g_garbage", -1))
	start = time.Now()
	r = runTool(t, "--zookeeper", connect, "--reset-offsets", "--group", "g", "--topic", "u", "--to-earliest", "--execute", "--timeout", "2s")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "broker 98")
	require.Less(t, time.Since(start), 20*time.Second, "bounded by --timeout")
	data, _, err := zk.Get(testwait.Context(t, time.Minute), g+"/offsets/u/0")
	require.NoError(t, err)
	require.Equal(t, "5", string(data), "nothing written")

	// --list under the chroot sees only this group.
	require.Equal(t, []string{"g"}, strings.Fields(runOK(t, "--zookeeper", connect, "--list")))
}

// Issue 19: a refused ZooKeeper port waited the whole --timeout. When
// every server refuses the connection, the tool fails at once, naming the
// hosts and the refusal.
func TestRefusedZooKeeperFailsFast(t *testing.T) {
	var addrs []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addrs = append(addrs, ln.Addr().String())
		require.NoError(t, ln.Close()) // nothing listens there now
	}
	start := time.Now()
	r := runTool(t, "--zookeeper", strings.Join(addrs, ",")+"/kafka", "--list", "--timeout", "60s")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "cannot reach ZooKeeper")
	require.Contains(t, r.stderr, "connection refused", "names the cause")
	for _, a := range addrs {
		require.Contains(t, r.stderr, a, "names every host")
	}
	require.Less(t, time.Since(start), 15*time.Second, "a refusal is final: no waiting for --timeout")
}

// openRaw opens a session without chroot.
func openRaw(server string) (*zksession.Session, error) {
	return zksession.Dial(testCtxBackground(), zksession.SessionConfig{Connect: server, SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
}
