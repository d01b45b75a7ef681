package testcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
)

// DefaultChroot is the ZooKeeper chroot of the brokers, as in most real
// deployments ("127.0.0.1:2181/kafka").
const DefaultChroot = "/kafka"

// Options configures Start.
type Options struct {
	// Brokers is the number of Kafka brokers (KRaft nodes); 1 if zero.
	Brokers int
	// KRaft starts Kafka 4.x nodes in KRaft mode, with no ZooKeeper at
	// all, instead of ZooKeeper and Kafka 3.9 brokers. Chroot is then
	// unused.
	KRaft bool
	// Controllers, in KRaft mode, is how many nodes, from id 0 up, are
	// KRaft controllers as well as brokers (process.roles=broker,controller);
	// the others are brokers only. Every node if zero. A majority of the
	// controllers must run for the cluster to change its metadata.
	Controllers int
	// ZooKeeperServers is the number of ZooKeeper servers: 0 or 1 for a
	// single standalone server, 3 or 5 for an ensemble (quorum of a
	// majority, with the timing of ZooKeeperTickTime), whose servers the
	// brokers all list in zookeeper.connect. Unless Detach is set, the
	// servers of an ensemble reach each other through proxies in this
	// process, so that IsolateZooKeeperServer can cut one off. ZooKeeper
	// mode only.
	ZooKeeperServers int
	// ZooKeeperServerProperties, indexed by server, override or add
	// zoo.cfg entries of single servers (a different maxSessionTimeout on
	// one of them, say).
	ZooKeeperServerProperties []map[string]string
	// Chroot is the brokers' ZooKeeper chroot; DefaultChroot if empty.
	Chroot string
	// BrokerSessionTimeout is the brokers' zookeeper.session.timeout.ms
	// (broker.session.timeout.ms in KRaft mode); 6s if zero. A shorter one
	// makes leadership move faster after a kill.
	BrokerSessionTimeout time.Duration
	// BrokerProperties override or add server.properties entries.
	BrokerProperties map[string]string
	// Dir is where data and logs go; a fresh temporary directory if empty.
	// Stop removes it only if Start created it.
	Dir string
	// Detach lets the JVMs outlive this process (make cluster-up); Stop
	// must then come from ReadState.
	Detach bool
	// StartTimeout bounds the whole start-up; 6 minutes if zero (sized
	// for a 2-core machine with a load of 30 and more).
	StartTimeout time.Duration
	// Logf, if set, receives progress lines.
	Logf func(format string, args ...any)
	// Secure gives the brokers TLS and SASL listeners besides PLAINTEXT,
	// with certificates made at start-up and a SCRAM user created through
	// ZooKeeper, or in KRaft mode when the storage is formatted (see
	// Security and the Listener constants). Only ZooKeeper mode gives
	// ZooKeeper a TLS port.
	Secure bool
	// BrokerVersion is the Kafka release of the brokers, one of
	// BrokerVersions (older releases for the broker matrix); Kafka 3.9
	// if empty. ZooKeeper always runs from the Kafka 3.9 jars. ZooKeeper
	// mode only.
	BrokerVersion string
	// FullJIT runs the servers' JVMs with both of HotSpot's compilers, as
	// production does. By default they stop at the first (C1,
	// -XX:TieredStopAtLevel=1): a cluster started for a test then uses
	// about 40 % less CPU (a two-node KRaft and a three-broker test, 37 s
	// of the brokers' CPU against 21 s) and a 2-core machine runs the
	// suite sooner. Throughput benchmarks set it.
	FullJIT bool
}

// Cluster is a running ZooKeeper with Kafka brokers in ZooKeeper mode, or
// Kafka 4.x nodes in KRaft mode (KRaft). A Cluster built from the
// environment (FromEnv, FromEnvKRaft) has no processes to control: its
// control methods return ErrNotControlled.
type Cluster struct {
	opts    Options
	dir     string
	ownsDir bool
	chroot  string
	kraft   bool

	mu       sync.Mutex
	zk       []*node // ZooKeeper servers, by index
	zkPaused []bool  // by ZooKeeper server index; guarded by mu
	brokers  []*node // index = broker id
	quorum   *quorumNet

	zkServers   []string // client host:port of each ZooKeeper server
	brokerAddrs []string // host:port of each broker, by id

	security *Security // Options.Secure
}

// ErrNotControlled is returned by the control methods of a cluster this
// process did not start.
var ErrNotControlled = errors.New("testcluster: this cluster was not started by this process, it cannot be controlled")

// ErrNoZooKeeper is returned by the ZooKeeper methods of a KRaft cluster.
var ErrNoZooKeeper = errors.New("testcluster: this is a KRaft cluster, it has no ZooKeeper")

// node is one JVM of the cluster and how to start it again.
type node struct {
	jvm
	id   int
	port int
}

// Start launches ZooKeeper and the brokers, and returns once every broker
// has registered in ZooKeeper and answers requests; with opts.KRaft, it
// launches the KRaft nodes and returns once every broker is registered with
// the controller quorum and answers requests. On failure everything started
// is stopped.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	if opts.Brokers <= 0 {
		opts.Brokers = 1
	}
	if opts.Controllers <= 0 || opts.Controllers > opts.Brokers {
		opts.Controllers = opts.Brokers
	}
	if opts.Chroot == "" {
		opts.Chroot = DefaultChroot
	}
	if opts.BrokerSessionTimeout <= 0 {
		opts.BrokerSessionTimeout = 6 * time.Second
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 6 * time.Minute
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.KRaft {
		opts.Chroot = ""
	}
	if opts.ZooKeeperServers < 0 || opts.ZooKeeperServers > 1 && opts.KRaft {
		return nil, fmt.Errorf("testcluster: Options.ZooKeeperServers=%d: want 0 or 1 (one server), or 3 or 5 for an ensemble, in ZooKeeper mode", opts.ZooKeeperServers)
	}
	if opts.ZooKeeperServers > 1 && opts.Secure {
		return nil, errors.New("testcluster: Options.Secure gives one ZooKeeper server a TLS port; it needs ZooKeeperServers 0 or 1")
	}
	if opts.ZooKeeperServers == 0 {
		opts.ZooKeeperServers = 1
	}
	c := &Cluster{opts: opts, dir: opts.Dir, chroot: opts.Chroot, kraft: opts.KRaft}
	if c.dir == "" {
		prefix := "zkconsumer-cluster-"
		if opts.KRaft {
			prefix = kraftDirPrefix
		}
		if c.dir, err = os.MkdirTemp("", prefix); err != nil {
			return nil, err
		}
		c.ownsDir = true
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w%s", err, c.logTails())
			_ = c.Stop()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	if opts.KRaft {
		if err := c.startKRaft(ctx); err != nil {
			return nil, err
		}
		return c, nil
	}

	lib, err := Kafka39Lib()
	if err != nil {
		return nil, err
	}
	log4j, err := log4jConfig()
	if err != nil {
		return nil, err
	}
	nzk := opts.ZooKeeperServers
	ports, err := freePorts(3*nzk + opts.Brokers)
	if err != nil {
		return nil, err
	}
	zkp := make([]zkPorts, nzk)
	for i := range zkp {
		zkp[i] = zkPorts{client: ports[3*i], quorum: ports[3*i+1], election: ports[3*i+2]}
	}
	brokerPorts := ports[3*nzk:]
	cp := filepath.Join(lib, "*")
	release, err := releaseFor(opts.BrokerVersion)
	if err != nil {
		return nil, err
	}
	brokerCP, err := release.classpath()
	if err != nil {
		return nil, err
	}
	if opts.Secure {
		if err := c.prepareSecurity(); err != nil {
			return nil, err
		}
	}
	if err := c.startZooKeeper(ctx, cp, log4j, zkp); err != nil {
		return nil, err
	}
	if opts.Secure {
		if err := c.createSCRAMUser(ctx); err != nil {
			return nil, err
		}
	}
	for id := 0; id < opts.Brokers; id++ {
		if err := c.addBroker(brokerCP, log4j, id, brokerPorts[id]); err != nil {
			return nil, err
		}
	}
	if err := c.startBrokers(ctx); err != nil {
		return nil, err
	}
	opts.Logf("testcluster: ZooKeeper %s, brokers %s, data in %s", c.ZKConnect(), strings.Join(c.brokerAddrs, ","), c.dir)
	return c, nil
}

func (c *Cluster) addBroker(cp, log4j string, id, port int) error {
	dir := filepath.Join(c.dir, fmt.Sprintf("broker-%d", id))
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	props := c.brokerProperties()
	for k, v := range map[string]string{
		"broker.id":                       strconv.Itoa(id),
		"zookeeper.connect":               c.ZKConnect(),
		"zookeeper.session.timeout.ms":    strconv.FormatInt(c.opts.BrokerSessionTimeout.Milliseconds(), 10),
		"zookeeper.connection.timeout.ms": "60000",
		"listeners":                       "PLAINTEXT://" + addr,
		"advertised.listeners":            "PLAINTEXT://" + addr,
		"log.dirs":                        filepath.Join(dir, "data"),
		"controlled.shutdown.enable":      "true",
	} {
		props[k] = v
	}
	if c.security != nil {
		c.security.addSecureListeners(id, props)
	}
	addReleaseProperties(c.opts.BrokerVersion, props)
	_, err := c.addKafkaServer(fmt.Sprintf("broker-%d", id), dir, cp, "-Dlog4j.configuration=file:"+log4j, id, port, addr, props)
	return err
}

// jvmFlags are small-heap settings for a 2-core test machine, with the
// log4j 1.x configuration of ZooKeeper and Kafka 3.9.
func (c *Cluster) jvmFlags(heap, log4j, logDir string) []string {
	return c.serverJVMFlags(heap, "-Dlog4j.configuration=file:"+log4j, logDir)
}

// serverJVMFlags are jvmFlags with logFlag naming the logging configuration.
func (c *Cluster) serverJVMFlags(heap, logFlag, logDir string) []string {
	jit := "-XX:TieredStopAtLevel=1"
	if c.opts.FullJIT {
		jit = "-XX:CICompilerCount=2"
	}
	return []string{
		"-Xms64m", "-Xmx" + heap, jit,
		"-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
		"-XX:ParallelGCThreads=1", "-XX:ConcGCThreads=1",
		"-XX:-UsePerfData", "-Djava.awt.headless=true",
		logFlag,
		"-Dkafka.logs.dir=" + logDir,
		"-Dzookeeper.admin.enableServer=false",
		// Marks the process as ours; ReadState checks it before signalling.
		"-Dzkconsumer.testcluster=" + logDir,
	}
}

func writeProperties(path string, props map[string]string) error {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# Written by zkconsumer's internal/testrig/testcluster.\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// logTails returns the last lines of every JVM's log, for start-up errors.
func (c *Cluster) logTails() string {
	var b strings.Builder
	nodes := append(append([]*node(nil), c.zk...), c.brokers...)
	for _, n := range nodes {
		if n == nil {
			continue
		}
		data, err := os.ReadFile(n.logPath)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > 15 {
			lines = lines[len(lines)-15:]
		}
		fmt.Fprintf(&b, "\n--- last lines of %s (%s):\n%s", n.name, n.logPath, strings.Join(lines, "\n"))
	}
	return b.String()
}

// Chroot is the brokers' ZooKeeper chroot, e.g. "/kafka" ("" in KRaft mode).
func (c *Cluster) Chroot() string { return c.chroot }

// KRaft reports whether the cluster runs Kafka 4.x in KRaft mode, without
// ZooKeeper.
func (c *Cluster) KRaft() bool { return c.kraft }

// BrokerAddrs are the brokers' host:port, by broker id.
func (c *Cluster) BrokerAddrs() []string { return append([]string(nil), c.brokerAddrs...) }

// Dir is where the cluster keeps its data and logs ("" for FromEnv).
func (c *Cluster) Dir() string { return c.dir }

// Controlled reports whether this process started the cluster's JVMs.
func (c *Cluster) Controlled() bool { return len(c.zk) > 0 || len(c.brokers) > 0 }

// Stop ends every JVM this cluster started and removes the directory it
// created. It is idempotent.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, b := range c.brokers {
		errs = append(errs, b.stop(syscall.SIGKILL, 5*time.Second))
	}
	for _, z := range c.zk {
		errs = append(errs, z.stop(syscall.SIGKILL, 5*time.Second))
	}
	if c.quorum != nil {
		c.quorum.close()
	}
	if c.ownsDir && c.dir != "" {
		errs = append(errs, os.RemoveAll(c.dir))
		c.ownsDir = false
	}
	return errors.Join(errs...)
}

// dialZK opens an observer ZooKeeper connection (no chroot) and waits until
// it has a session.
func (c *Cluster) dialZK(ctx context.Context) (*zk.Conn, error) {
	if c.kraft {
		return nil, ErrNoZooKeeper
	}
	conn, events, err := zk.Connect(c.zkServers, 10*time.Second, zk.WithLogger(discardLogger{}))
	if err != nil {
		return nil, err
	}
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go drain(events)
				return conn, nil
			}
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("testcluster: no ZooKeeper session with %s: %w", c.ZKServer(), ctx.Err())
		}
	}
}

func drain(events <-chan zk.Event) {
	for range events {
	}
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// WaitBrokers waits until n brokers are registered under <chroot>/brokers/ids
// (in KRaft mode: listed in the metadata, i.e. registered and unfenced).
func (c *Cluster) WaitBrokers(ctx context.Context, n int) error {
	if c.kraft {
		return c.waitBrokerCount(ctx, n, func() (int, error) {
			ids, err := c.kraftBrokerIDs(ctx)
			return len(ids), err
		})
	}
	conn, err := c.dialZK(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return c.waitBrokerCount(ctx, n, func() (int, error) {
		ids, _, err := conn.Children(c.chroot + "/brokers/ids")
		return len(ids), err
	})
}

// RegisteredBrokers reads the broker ids registered in ZooKeeper (in KRaft
// mode: the ids of the brokers a metadata request lists).
func (c *Cluster) RegisteredBrokers(ctx context.Context) ([]int, error) {
	if c.kraft {
		return c.kraftBrokerIDs(ctx)
	}
	conn, err := c.dialZK(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	children, _, err := conn.Children(c.chroot + "/brokers/ids")
	if err != nil {
		return nil, fmt.Errorf("testcluster: list %s/brokers/ids: %w", c.chroot, err)
	}
	ids := make([]int, 0, len(children))
	for _, s := range children {
		id, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("testcluster: broker id %q: %w", s, err)
		}
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids, nil
}
