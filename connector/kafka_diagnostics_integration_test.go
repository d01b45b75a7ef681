package connector

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// errorLog drains a connector's Errors and keeps what it read.
type errorLog struct {
	mu      sync.Mutex
	errs    []error
	changed chan struct{}
	done    chan struct{}
}

func drainErrors(t *testing.T, conn *ConsumerConnector) *errorLog {
	l := &errorLog{changed: make(chan struct{}, 1), done: make(chan struct{})}
	// The errors read are logged when the test ends: the goroutine reading
	// them may outlive it (Errors closes at Shutdown, a cleanup that runs
	// after this one), and a test may not log once it has ended.
	t.Cleanup(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, err := range l.errs {
			t.Logf("consumer error: %v", err)
		}
	})
	go func() {
		defer close(l.done)
		for err := range conn.Errors() {
			l.mu.Lock()
			l.errs = append(l.errs, err)
			l.mu.Unlock()
			select {
			case l.changed <- struct{}{}:
			default:
			}
		}
	}()
	return l
}

// count returns how many of the errors read so far match accepts.
func (l *errorLog) count(match func(error) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, err := range l.errs {
		if match(err) {
			n++
		}
	}
	return n
}

// await returns the first error read that match accepts, failing the test
// after timeout.
func (l *errorLog) await(t *testing.T, timeout time.Duration, what string, match func(error) bool) error {
	t.Helper()
	deadline := time.After(timeout)
	for {
		l.mu.Lock()
		for _, err := range l.errs {
			if match(err) {
				l.mu.Unlock()
				return err
			}
		}
		l.mu.Unlock()
		select {
		case <-l.changed:
		case <-deadline:
			t.Fatalf("no error on Errors within %v: %s", timeout, what)
		}
	}
}

// closedPort returns an address on loopback where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// kafkaSecureConfig is a Kafka-mode member of group reaching the secure
// cluster's listener through the security settings of way.
func kafkaSecureConfig(t *testing.T, c *testcluster.Cluster, group, way, listener string) Config {
	cfg := secureConfig(t, c, group, way)
	k := kafkaConfig(c, group)
	cfg.GroupCoordination, cfg.ZooKeeperConnect = k.GroupCoordination, ""
	cfg.BootstrapServers = c.Security().Listener(listener, 0)
	cfg.SessionTimeout, cfg.HeartbeatInterval, cfg.MaxPollInterval = k.SessionTimeout, k.HeartbeatInterval, k.MaxPollInterval
	return cfg
}

// TestKafkaModeSecurityFailuresAreFatal: in Kafka mode, a wrong SASL
// password, a broker certificate from an untrusted authority or for
// another host make CreateMessageStreams fail within seconds, with an
// error that names the setting to fix (and no secret), matches
// ErrGroupFatal and ErrAuthentication, and reaches Errors too; the group
// is left without a member. (Before, CreateMessageStreams waited for its
// context with nothing on Errors.)
func TestKafkaModeSecurityFailuresAreFatal(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedSecure(t)
	sec := c.Security()
	topic := newTopic(t, c, 1, 10)
	for _, tc := range []struct {
		name, way, listener string
		change              func(*Config)
		want                []string
	}{
		{"bad password", "SASL_SSL SCRAM-SHA-512", testcluster.ListenerSASLSSL,
			func(c *Config) { c.Security.SASLPassword = "not-the-password" }, []string{"sasl.username and sasl.password", `"` + sec.User + `"`}},
		{"untrusted CA", "SSL", testcluster.ListenerSSL, func(c *Config) {
			c.Security.SSLTruststoreLocation, c.Security.SSLTruststoreType, c.Security.SSLTruststorePassword = sec.UntrustedCAFile, "", ""
		}, []string{"ssl.truststore.location", "unknown authority", sec.Listener(testcluster.ListenerSSL, 0)}},
		{"wrong host", "SSL", testcluster.ListenerWrongHost, func(*Config) {}, []string{"ssl.endpoint.identification.algorithm", "127.0.0.2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			group := testcluster.UniqueName("g-kfatal")
			cfg := kafkaSecureConfig(t, c, group, tc.way, tc.listener)
			tc.change(&cfg)
			conn := newConnector(t, cfg)
			errs := drainErrors(t, conn)
			ctx := testwait.Context(t, 45*time.Second)
			start := time.Now()
			_, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
			took := time.Since(start)
			t.Logf("after %v: %v", took, err)
			require.Error(t, err)
			require.Less(t, took, 30*time.Second)
			require.ErrorIs(t, err, ErrGroupFatal)
			require.ErrorIs(t, err, ErrAuthentication)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
			require.NotContains(t, err.Error(), "not-the-password")
			require.NotContains(t, err.Error(), sec.Password)
			reported := errs.await(t, 5*time.Second, "the fatal error", func(err error) bool { return errors.Is(err, ErrGroupFatal) })
			require.ErrorIs(t, reported, ErrAuthentication)
			require.ErrorIs(t, conn.Assignment().Err, ErrNotJoined)
			// A second attempt fails alike, not with ErrStreamsExist.
			_, err = conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
			require.ErrorIs(t, err, ErrAuthentication)
		})
	}
}

// TestKafkaModeTLSToPlainListenerIsReported: TLS to a listener that does
// not speak it ends in a connection the broker closes, which may also be a
// broker restarting: it is retried, and reported on Errors within seconds
// with the hint to check security.protocol.
func TestKafkaModeTLSToPlainListenerIsReported(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedSecure(t)
	cfg := kafkaSecureConfig(t, c, testcluster.UniqueName("g-tlsplain"), "SSL", testcluster.ListenerSASLPlaintext)
	conn := newConnector(t, cfg)
	errs := drainErrors(t, conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := conn.CreateMessageStreams(ctx, map[string]int{"t": 1})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, ErrAuthentication)
	reported := errs.await(t, time.Second, "the failed handshake", func(err error) bool {
		return strings.Contains(err.Error(), "TLS handshake")
	})
	require.ErrorContains(t, reported, "is this a TLS listener? check security.protocol")
	require.NotErrorIs(t, reported, ErrGroupFatal)
	requireConnectorText(t, reported)
}

// TestKafkaModeUnreachableBootstrapIsReported: with no broker at
// bootstrap.servers, the failure reaches Errors within seconds, naming the
// address, once however often the join is retried, and
// CreateMessageStreams, once its context ends, returns an error that wraps
// both the context's error and the connection's (before,
// "join group G: context deadline exceeded" and nothing on Errors).
func TestKafkaModeUnreachableBootstrapIsReported(t *testing.T) {
	t.Parallel()
	addr := closedPort(t)
	cfg := DefaultConfig()
	cfg.GroupID = testcluster.UniqueName("g-unreach")
	cfg.GroupCoordination = CoordinationKafka
	cfg.BootstrapServers = addr
	conn := newConnector(t, cfg)
	errs := drainErrors(t, conn)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	start := time.Now()
	_, err := conn.CreateMessageStreams(ctx, map[string]int{"t": 1})
	t.Logf("after %v: %v", time.Since(start), err)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, syscall.ECONNREFUSED, "the last cause is kept")
	require.ErrorContains(t, err, addr)
	refused := func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
	reported := errs.await(t, time.Second, "the unreachable bootstrap server", refused)
	require.ErrorContains(t, reported, "bootstrap.servers "+addr)
	requireConnectorText(t, err)
	requireConnectorText(t, reported)
	require.NotErrorIs(t, reported, ErrGroupFatal, "retried, not fatal")
	// The join was retried throughout the 15 s; the failure is reported
	// once it has lasted 3 s, then at most every 30 s, not at each retry.
	require.Equal(t, 1, errs.count(refused), "reports of the refused connection")
}

// TestKafkaModeCoordinatorNotAvailableIsReported: on a cluster that cannot
// create __consumer_offsets (offsets.topic.replication.factor above the
// number of brokers), no coordinator can be found; the member says so on
// Errors within seconds, with what to check, and CreateMessageStreams'
// error keeps COORDINATOR_NOT_AVAILABLE as its last cause.
func TestKafkaModeCoordinatorNotAvailableIsReported(t *testing.T) {
	t.Parallel()
	c := testcluster.Private(t, testcluster.Options{KRaft: true,
		BrokerProperties: map[string]string{"offsets.topic.replication.factor": "3"}})
	topic := newTopic(t, c, 1, 10)
	conn := newConnector(t, kafkaConfig(c, testcluster.UniqueName("g-nocoord")))
	errs := drainErrors(t, conn)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	t.Logf("CreateMessageStreams: %v", err)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, sarama.ErrConsumerCoordinatorNotAvailable)
	reported := errs.await(t, time.Second, "the missing coordinator", func(err error) bool {
		return errors.Is(err, sarama.ErrConsumerCoordinatorNotAvailable)
	})
	require.ErrorContains(t, reported, "offsets.topic.replication.factor")
	requireConnectorText(t, err)
	requireConnectorText(t, reported)
}

// requireConnectorText: err, returned or reported by the connector, reads
// as the connector's own (issue #28): it begins with "connector: ", once,
// and names no package an application cannot import.
func requireConnectorText(t *testing.T, err error) {
	t.Helper()
	text := err.Error()
	require.True(t, strings.HasPrefix(text, "connector: "), "%q does not begin with \"connector: \"", text)
	for _, name := range []string{"connector", "kafkagroup", "coordinator", "secure", "kip848", "streamcore"} {
		if name != "connector" {
			require.False(t, strings.HasPrefix(text, name+": "), "%q begins with %s", text, name)
		}
		require.NotContains(t, text, ": "+name+": ", "a chain of packages")
	}
}

// TestKafkaModeFailedFirstJoinLeavesNothing: a first join that is still
// waiting for the group when CreateMessageStreams' context ends leaves the
// group before CreateMessageStreams returns: the rebalance it started goes
// on without it, the other member gets every partition, and calling
// CreateMessageStreams again works. (Before, the member joined anyway,
// took half of the partitions into streams nobody held, and the retry got
// ErrStreamsExist.)
func TestKafkaModeFailedFirstJoinLeavesNothing(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedKRaft(t)
	const n = 40
	topic := newTopic(t, c, 2, n)
	group := testcluster.UniqueName("g-zombie")
	cfg := kafkaConfig(c, group)
	cfg.AutoCommitEnable = false

	// a holds the rebalance up in its listener until the test lets go.
	gate := make(chan struct{})
	var held sync.Once
	a := newConnector(t, cfg, WithRebalanceListener(RebalanceListenerFuncs{
		Releasing: func(context.Context, *ConsumerConnector, map[string][]int32, bool) {
			held.Do(func() { <-gate })
		},
	}))
	ctx := testwait.Context(t, 3*time.Minute)
	_, err := a.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	waitGroup(t, c, group, topic, 2, 1)

	b := newConnector(t, cfg)
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, err = b.CreateMessageStreams(short, map[string]int{topic: 1})
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(gate)
	ms := waitGroup(t, c, group, topic, 2, 1)
	require.Len(t, ms[0].partitions[topic], 2, "the member that stayed owns every partition")
	require.Eventually(t, func() bool { return len(a.Assignment().Partitions[topic]) == 2 }, 30*time.Second, 50*time.Millisecond)

	// The retry joins; a and b share the topic and read it once.
	streams, err := b.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	waitGroup(t, c, group, topic, 2, 2)
	require.NoError(t, a.Shutdown(ctx))
	col := newCollector()
	col.read(ctx, "b", streams[topic][0])
	col.waitAll(t, 0, n, time.Minute)
}

// TestKafkaModeStaticLeaderRestartStillFollowsPartitions: after the static
// member that led the group restarts (it rejoins as a follower: JoinGroup
// v5 has no skipAssignment, KIP-814), partitions added to the topic are
// still noticed, by whichever member checks first, and consumed.
func TestKafkaModeStaticLeaderRestartStillFollowsPartitions(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedKRaft(t)
	topic := newTopic(t, c, 2, 0)
	group := testcluster.UniqueName("g-kstatic-grow")
	cfg := kafkaConfig(c, group)
	cfg.SessionTimeout = 30 * time.Second // the restart must not time the member out
	ctx := testwait.Context(t, 3*time.Minute)
	start := func(instance string) *ConsumerConnector {
		cfg := cfg
		cfg.GroupInstanceID = instance
		conn, err := New(ctx, cfg)
		require.NoError(t, err)
		_, err = conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		return conn
	}
	a := start("leader-a")
	waitGroup(t, c, group, topic, 2, 1)
	b := start("follower-b")
	t.Cleanup(func() { shutdown(t, b) })
	waitGroup(t, c, group, topic, 2, 2)
	shutdown(t, a) // a static member stays in the group
	a = start("leader-a")
	t.Cleanup(func() { shutdown(t, a) })
	require.NoError(t, c.AddPartitions(ctx, topic, 4))
	waitGroup(t, c, group, topic, 4, 2)
}
