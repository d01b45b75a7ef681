package connector

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// recordingDialer is a Dialer that remembers the local address of every
// connection it made, and to where.
type recordingDialer struct {
	net.Dialer
	mu     sync.Mutex
	locals map[string]string // local host:port -> remote host:port
	dials  int
}

func newRecordingDialer() *recordingDialer {
	return &recordingDialer{locals: map[string]string{}}
}

func (d *recordingDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := d.Dialer.DialContext(ctx, network, address)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dials++
	if err == nil {
		d.locals[c.LocalAddr().String()] = c.RemoteAddr().String()
	}
	return c, err
}

func (d *recordingDialer) made(local string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.locals[local]
	return ok
}

func (d *recordingDialer) remotes() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]int{}
	for _, r := range d.locals {
		out[r]++
	}
	return out
}

// socketWatch samples this process's TCP sockets (/proc/self/fd and
// /proc/self/net/tcp{,6}) every millisecond and records every connection
// to one of ports that was not open when the watch began: local address
// to remote address.
type socketWatch struct {
	ports    map[int]bool
	baseline map[string]bool // inodes
	mu       sync.Mutex
	seen     map[string]string
	samples  int
	stop     chan struct{}
	done     chan struct{}
}

// watchSockets watches every socket of this process, so a test that calls
// it must not be parallel with others (their connections would be seen).
func watchSockets(t *testing.T, addrs []string) *socketWatch {
	t.Helper()
	w := &socketWatch{ports: map[int]bool{}, seen: map[string]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	for _, a := range addrs {
		_, port, err := net.SplitHostPort(a)
		require.NoError(t, err)
		p, err := strconv.Atoi(port)
		require.NoError(t, err)
		w.ports[p] = true
	}
	w.baseline = ownSocketInodes(t)
	go func() {
		defer close(w.done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			w.sample()
			select {
			case <-w.stop:
				w.sample()
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// finish stops sampling and returns the connections seen.
func (w *socketWatch) finish() (map[string]string, int) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen, w.samples
}

func (w *socketWatch) sample() {
	inodes := ownSocketInodes(nil)
	var found [][2]string
	for _, file := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || !inodes[fields[9]] || w.baseline[fields[9]] {
				continue
			}
			remote, rport := procAddr(fields[2])
			if !w.ports[rport] {
				continue
			}
			local, _ := procAddr(fields[1])
			found = append(found, [2]string{local, remote})
		}
		f.Close()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples++
	for _, lr := range found {
		w.seen[lr[0]] = lr[1]
	}
}

// ownSocketInodes returns the inodes of the sockets this process has open.
func ownSocketInodes(t *testing.T) map[string]bool {
	out := map[string]bool{}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		if t != nil {
			t.Fatalf("the test needs /proc: %v", err)
		}
		return out
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			out[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	return out
}

// procAddr decodes an address of /proc/net/tcp ("0100007F:1F90") or
// /proc/net/tcp6 into host:port and the port.
func procAddr(s string) (string, int) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return "", 0
	}
	p, _ := strconv.ParseUint(port, 16, 16)
	raw, err := hex.DecodeString(host)
	if err != nil {
		return "", 0
	}
	// Each 32-bit word is in the host's (little-endian) byte order.
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	ip := net.IP(raw)
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(int(p))), int(p)
}

// consumeThrough runs a member built WithDialer(d) that reads n messages
// of topic, commits and shuts down.
func consumeThrough(t *testing.T, cfg Config, d Dialer, topic string, n int) {
	t.Helper()
	ctx := testwait.Context(t, 3*time.Minute)
	conn, err := New(ctx, cfg, WithDialer(d))
	require.NoError(t, err)
	go func() {
		for err := range conn.Errors() {
			t.Logf("consumer error: %v", err)
		}
	}()
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 2})
	require.NoError(t, err)
	col := newCollector()
	for i, s := range streams[topic] {
		col.read(ctx, fmt.Sprint(i), s)
	}
	col.waitAll(t, 0, n, 2*time.Minute)
	require.NoError(t, conn.CommitOffsets(ctx))
	require.NoError(t, conn.Shutdown(ctx))
	col.wg.Wait()
}

// checkEveryConnection fails the test if the watch saw a connection to the
// cluster that d did not make, or if d made no connection to one of each
// group of want (one ZooKeeper server of the ensemble, each broker), and
// reports how many of d's connections the watch saw.
func checkEveryConnection(t *testing.T, w *socketWatch, d *recordingDialer, want ...[]string) {
	t.Helper()
	seen, samples := w.finish()
	var bypass []string
	caught := 0
	for local, remote := range seen {
		if d.made(local) {
			caught++
			continue
		}
		bypass = append(bypass, local+" -> "+remote)
	}
	slices.Sort(bypass)
	require.Empty(t, bypass, "connections to the cluster that did not go through the dialer")
	remotes := d.remotes()
	for _, group := range want {
		n := 0
		for _, addr := range group {
			n += remotes[addr]
		}
		require.Positive(t, n, "no connection to %v went through the dialer (it made %v)", group, remotes)
	}
	t.Logf("%d connections through the dialer (%v); the socket watch caught %d of them in %d samples and no other",
		len(d.locals), remotes, caught, samples)
}

// TestWithDialerCarriesEveryConnection: a connector built WithDialer opens
// every connection through it. While members consume, commit and shut
// down, the test samples the process's own TCP sockets every millisecond
// and fails on any connection to ZooKeeper or a broker whose local address
// the dialer did not hand out. The ZooKeeper-mode member commits to Kafka
// (offsets.storage=kafka), so that the offsets coordinator's connections
// are exercised too; the Kafka-mode member exercises the broker listing
// and the group coordinator's connections; a member over SASL_SSL checks
// that TLS runs over the dialer's connections.
func TestWithDialerCarriesEveryConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: skipped by -short")
	}
	t.Run("zookeeper mode, offsets in Kafka", func(t *testing.T) {
		c := testcluster.Shared(t)
		const n = 300
		topic := newTopic(t, c, 3, n)
		cfg := testConfig(c, testcluster.UniqueName("g-dial"))
		cfg.OffsetsStorage = OffsetsStorageKafka
		cfg.DualCommitEnabled = DualCommitOff
		zk := strings.Split(c.ZKServer(), ",")
		d := newRecordingDialer()
		w := watchSockets(t, append(slices.Clone(zk), c.BrokerAddrs()...))
		consumeThrough(t, cfg, d, topic, n)
		checkEveryConnection(t, w, d, zk, c.BrokerAddrs())
		committed := fetchKafkaOffsets(t, c, cfg.GroupID, topic, 3)
		var total int64
		for _, off := range committed {
			total += off
		}
		require.Equal(t, int64(n), total, "committed %v", committed)
	})
	t.Run("kafka mode", func(t *testing.T) {
		c := testcluster.Shared(t)
		const n = 300
		topic := newTopic(t, c, 3, n)
		cfg := kafkaConfig(c, testcluster.UniqueName("g-dialk"))
		d := newRecordingDialer()
		w := watchSockets(t, c.BrokerAddrs())
		consumeThrough(t, cfg, d, topic, n)
		checkEveryConnection(t, w, d, c.BrokerAddrs())
	})
	t.Run("SASL_SSL", func(t *testing.T) {
		c := testcluster.SharedSecure(t)
		const n = 100
		topic := newTopic(t, c, 2, n)
		cfg := secureConfig(t, c, testcluster.UniqueName("g-dials"), "SASL_SSL SCRAM-SHA-512")
		cfg.OffsetsStorage = OffsetsStorageKafka
		cfg.DualCommitEnabled = DualCommitOff
		d := newRecordingDialer()
		zk := strings.Split(c.ZKServer(), ",")
		sasl := []string{c.Security().Listener(testcluster.ListenerSASLSSL, 0)}
		w := watchSockets(t, append(slices.Clone(zk), sasl...))
		consumeThrough(t, cfg, d, topic, n)
		checkEveryConnection(t, w, d, zk, sasl)
	})
}

// errDialRefused is what refusingDialer's dials fail with.
var errDialRefused = errors.New("test dialer refuses")

// refusingDialer fails every dial, recording the addresses it was asked
// for and the time each dial's context gave it (0 without a deadline).
type refusingDialer struct {
	mu     sync.Mutex
	addrs  []string
	budget []time.Duration
}

func (d *refusingDialer) DialContext(ctx context.Context, _, address string) (net.Conn, error) {
	var budget time.Duration
	if dl, ok := ctx.Deadline(); ok {
		budget = time.Until(dl)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addrs = append(d.addrs, address)
	d.budget = append(d.budget, budget)
	return nil, fmt.Errorf("%w %s", errDialRefused, address)
}

// requireBudgets fails the test unless every dial's context had a
// deadline, at most max away.
func (d *refusingDialer) requireBudgets(t *testing.T, max time.Duration) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, b := range d.budget {
		require.Positive(t, b, "dial %d (%s) without a deadline", i, d.addrs[i])
		require.LessOrEqual(t, b, max, "dial %d (%s)", i, d.addrs[i])
	}
}

func (d *refusingDialer) asked() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.addrs)
}

// TestFailingDialerFailsNew: with a dialer that fails every dial, New
// against a live ZooKeeper ensemble fails once
// zookeeper.connection.timeout.ms has passed, with an error that wraps
// ErrConnectionTimeout and carries the dialer's own error, having dialed
// only through the dialer (ZooKeeper's servers, as it came to them, each
// dial's context bounded by the session timeout) and left no goroutine
// behind.
func TestFailingDialerFailsNew(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: skipped by -short")
	}
	c := testcluster.Shared(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // every goroutine of the process: not parallel
	cfg := testConfig(c, testcluster.UniqueName("g-dialfail"))
	cfg.ZooKeeperConnectionTimeout = 2 * time.Second
	d := &refusingDialer{}
	start := time.Now()
	conn, err := New(t.Context(), cfg, WithDialer(d))
	t.Logf("after %v: %v", time.Since(start), err)
	require.Nil(t, conn)
	require.ErrorIs(t, err, ErrConnectionTimeout)
	require.ErrorContains(t, err, errDialRefused.Error())
	asked := d.asked()
	require.NotEmpty(t, asked, "New did not dial through the dialer")
	for _, a := range asked {
		require.Contains(t, c.ZKServers(), a, "a dial to something else than ZooKeeper")
	}
	d.requireBudgets(t, cfg.ZooKeeperSessionTimeout)
	require.Less(t, time.Since(start), 20*time.Second)
}

// TestFailingDialerFailsKafkaModeJoin: in Kafka mode New connects to
// nothing, so a dialer that fails every dial lets New succeed; the join
// (CreateMessageStreams) retries until its context ends and fails with
// the dialer's error, having dialed only the bootstrap brokers (each
// dial's context bounded by socket.timeout.ms), and Shutdown leaves no
// goroutine behind.
func TestFailingDialerFailsKafkaModeJoin(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: skipped by -short")
	}
	c := testcluster.Shared(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // every goroutine of the process: not parallel
	cfg := kafkaConfig(c, testcluster.UniqueName("g-dialfailk"))
	d := &refusingDialer{}
	conn, err := New(t.Context(), cfg, WithDialer(d))
	require.NoError(t, err)
	require.Empty(t, d.asked(), "New dialed in Kafka mode")
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Second)
	defer cancel()
	start := time.Now()
	_, err = conn.CreateMessageStreams(ctx, map[string]int{"t": 1})
	t.Logf("after %v: %v", time.Since(start), err)
	require.Error(t, err)
	require.ErrorContains(t, err, errDialRefused.Error())
	require.NotEmpty(t, d.asked())
	for _, a := range d.asked() {
		require.Contains(t, c.BrokerAddrs(), a, "a dial to something else than a bootstrap broker")
	}
	d.requireBudgets(t, cfg.SocketTimeout)
	require.NoError(t, conn.Shutdown(t.Context()))
}
