package testcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Environment variables naming an existing cluster (make cluster-up prints
// them; docker compose users set them by hand).
const (
	EnvZKConnect = "ZOOKEEPER_CONNECT"
	EnvBrokers   = "KAFKA_BROKERS"
	// EnvKRaftBrokers names the brokers of a Kafka 4.x KRaft cluster
	// (zkcluster up -kraft prints it), which SharedKRaft uses.
	EnvKRaftBrokers = "KRAFT_BROKERS"
)

// FromEnv returns the cluster named by ZOOKEEPER_CONNECT and KAFKA_BROKERS,
// or ok=false when they are unset. Such a cluster cannot be controlled.
func FromEnv() (c *Cluster, ok bool, err error) {
	zkc, brokers := os.Getenv(EnvZKConnect), os.Getenv(EnvBrokers)
	if zkc == "" && brokers == "" {
		return nil, false, nil
	}
	if zkc == "" || brokers == "" {
		return nil, true, fmt.Errorf("testcluster: set both %s and %s, or neither", EnvZKConnect, EnvBrokers)
	}
	servers, chroot, err := ParseZKConnect(zkc)
	if err != nil {
		return nil, true, fmt.Errorf("testcluster: %s: %w", EnvZKConnect, err)
	}
	return &Cluster{zkServers: servers, chroot: chroot, brokerAddrs: strings.Split(brokers, ",")}, true, nil
}

// ParseZKConnect splits a ZooKeeper connect string,
// "host1:port1,host2:port2/chroot", into its servers' host:port and its
// chroot ("" if none).
func ParseZKConnect(connect string) (servers []string, chroot string, err error) {
	hosts := connect
	if i := strings.IndexByte(connect, '/'); i >= 0 {
		hosts, chroot = connect[:i], connect[i:]
	}
	if chroot == "/" {
		chroot = ""
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		if _, _, err := net.SplitHostPort(h); err != nil {
			return nil, "", fmt.Errorf("ZooKeeper connect string %q: server %q is not host:port", connect, h)
		}
		servers = append(servers, h)
	}
	return servers, chroot, nil
}

// FromEnvKRaft returns the KRaft cluster named by KRAFT_BROKERS, or
// ok=false when it is unset. Such a cluster cannot be controlled.
func FromEnvKRaft() (c *Cluster, ok bool) {
	brokers := os.Getenv(EnvKRaftBrokers)
	if brokers == "" {
		return nil, false
	}
	return &Cluster{kraft: true, brokerAddrs: strings.Split(brokers, ",")}, true
}

// SharedZooKeeperServers is the size of the ZooKeeper ensemble of the
// shared cluster a test binary starts when the environment names none, as
// make test's (zkcluster up) has: the topology users run.
const SharedZooKeeperServers = 3

// sharedCluster is a cluster one test binary shares between its tests.
type sharedCluster struct {
	mu      sync.Mutex
	cluster *Cluster
	private bool // started by this process; Main stops it
	err     error
}

var shared, sharedKRaft sharedCluster

// Shared returns the cluster integration tests share: the one named by the
// environment, or else a one-broker cluster on a ZooKeeper ensemble of
// SharedZooKeeperServers servers that this test binary starts once and
// Main stops. It fails the test (never skips it) when no cluster can be had;
// only `go test -short` skips integration tests.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: skipped by -short")
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.cluster == nil && shared.err == nil {
		c, ok, err := FromEnv()
		if !ok {
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
			c, err = Start(ctx, Options{ZooKeeperServers: SharedZooKeeperServers, Logf: t.Logf})
			cancel()
			shared.private = err == nil
		}
		shared.cluster, shared.err = c, err
	}
	if shared.err != nil {
		t.Fatalf("integration test needs a real ZooKeeper and Kafka: %v", shared.err)
	}
	return shared.cluster
}

// SharedKRaft is Shared for a Kafka 4.x KRaft cluster (no ZooKeeper): the
// one named by KRAFT_BROKERS, or else a one-node cluster this test binary
// starts once and Main stops.
func SharedKRaft(t testing.TB) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: skipped by -short")
	}
	sharedKRaft.mu.Lock()
	defer sharedKRaft.mu.Unlock()
	if sharedKRaft.cluster == nil && sharedKRaft.err == nil {
		c, ok := FromEnvKRaft()
		var err error
		if !ok {
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
			c, err = Start(ctx, Options{KRaft: true, Logf: t.Logf})
			cancel()
			sharedKRaft.private = err == nil
		}
		sharedKRaft.cluster, sharedKRaft.err = c, err
	}
	if sharedKRaft.err != nil {
		t.Fatalf("integration test needs a real Kafka 4 KRaft cluster: %v", sharedKRaft.err)
	}
	return sharedKRaft.cluster
}

// Private starts a cluster of its own for a test that kills, pauses or
// restarts processes, and stops it when the test ends.
func Private(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: skipped by -short")
	}
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	c, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("integration test needs a real ZooKeeper and Kafka: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop cluster: %v", err)
		}
	})
	return c
}

// Main runs the tests of a package, stops the shared clusters if this binary
// started them, then checks for leaked goroutines. Use it as
//
//	func TestMain(m *testing.M) { testcluster.Main(m) }
func Main(m *testing.M, opts ...goleak.Option) {
	code := m.Run()
	for _, s := range []*sharedCluster{&shared, &sharedKRaft, &sharedSecure, &sharedSecureKRaft} {
		s.mu.Lock()
		if s.private && s.cluster != nil {
			if err := s.cluster.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				code = 1
			}
		}
		s.mu.Unlock()
	}
	if code == 0 {
		if err := goleak.Find(append(opts, IgnoredGoroutines()...)...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// IgnoredGoroutines are third-party background goroutines that live for the
// whole process by design.
func IgnoredGoroutines() []goleak.Option {
	return []goleak.Option{
		// go-metrics (used by sarama) starts one process-wide meter ticker.
		goleak.IgnoreTopFunction("github.com/rcrowley/go-metrics.(*meterArbiter).tick"),
	}
}
