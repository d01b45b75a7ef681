package connector

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

type nopZKLogger struct{}

func (nopZKLogger) Printf(string, ...any) {}

// aclOf reads the ACL of a node (path relative to the chroot).
func aclOf(t *testing.T, c *testcluster.Cluster, path string) []zk.ACL {
	t.Helper()
	conn, events, err := zk.Connect(c.ZKServers(), 10*time.Second, zk.WithLogger(nopZKLogger{}))
	require.NoError(t, err)
	defer conn.Close()
	go func() {
		for range events {
		}
	}()
	acl, _, err := conn.GetACL(c.Chroot() + path)
	require.NoError(t, err)
	return acl
}

// TestZooKeeperACLs: with zookeeper.auth and zookeeper.set.acl the nodes a
// member creates under /consumers/<group> can be read by everyone but
// changed only by its identity; a member of another identity fails at once
// with NOAUTH naming the node.
func TestZooKeeperACLs(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedSecure(t)
	topic := newTopic(t, c, 2, 50)
	group := testcluster.UniqueName("g-acl")
	cfg := testConfig(c, group)
	cfg.Security.ZooKeeperAuth = "alice:alice-zk-secret"
	cfg.Security.ZooKeeperSetACL = true
	ctx := testwait.Context(t, 2*time.Minute)
	alice := newConnector(t, cfg)
	streams, err := alice.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col := newCollector()
	col.read(ctx, "alice", streams[topic][0])
	col.waitAll(t, 0, 50, time.Minute)
	require.NoError(t, alice.CommitOffsets(ctx))

	secured := map[string]bool{}
	for _, path := range []string{
		zkutil.GroupPath(group),
		zkutil.ConsumerIDsPath(group),
		zkutil.ConsumerIDPath(group, alice.ConsumerID()),
		zkutil.OffsetPath(group, topic, 0),
	} {
		acl := aclOf(t, c, path)
		var worldRead, aliceAll bool
		for _, a := range acl {
			switch {
			case a.Scheme == "world" && a.ID == "anyone" && a.Perms == zk.PermRead:
				worldRead = true
			case a.Scheme == "digest" && strings.HasPrefix(a.ID, "alice:") && a.Perms == zk.PermAll:
				aliceAll = true
			}
		}
		require.True(t, worldRead && aliceAll && len(acl) == 2, "%s has ACL %+v", path, acl)
		secured[path] = true
	}
	for _, a := range aclOf(t, c, zkutil.ConsumersPath) {
		require.NotEqual(t, "digest", a.Scheme, "/consumers stays open")
	}

	for _, other := range []string{"bob:bob-zk-secret", ""} {
		bcfg := testConfig(c, group)
		bcfg.Security.ZooKeeperAuth = other
		bcfg.RebalanceMaxRetries = 2
		bob := newConnector(t, bcfg)
		start := time.Now()
		_, err := bob.CreateMessageStreams(ctx, map[string]int{topic: 1})
		t.Logf("identity %q after %v: %v", other, time.Since(start), err)
		require.Error(t, err)
		require.True(t, errors.Is(err, zksession.ErrNoAuth), "%v", err)
		require.Contains(t, err.Error(), "/consumers/"+group+"/ids/")
		require.NotContains(t, err.Error(), "secret")
		require.Less(t, time.Since(start), 5*time.Second, "no retry loop")
	}
}

// TestZooKeeperTLS: with zookeeper.ssl.client.enable the session speaks
// TLS to ZooKeeper's secure client port (which speaks nothing else), and a
// ZooKeeper certificate signed by an unknown authority fails New within
// zookeeper.connection.timeout.ms, naming the trust store key.
func TestZooKeeperTLS(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedSecure(t)
	sec := c.Security()
	topic := newTopic(t, c, 1, 20)
	props := props(testConfig(c, testcluster.UniqueName("g-zktls")))
	props["zookeeper.connect"] = sec.ZooKeeperTLS() + c.Chroot()
	props["zookeeper.clientCnxnSocket"] = "org.apache.zookeeper.ClientCnxnSocketNetty"
	props["zookeeper.ssl.client.enable"] = "true"
	props["zookeeper.ssl.truststore.location"] = sec.CAFile
	props["zookeeper.ssl.truststore.type"] = "PEM"
	props["zookeeper.ssl.keystore.location"] = sec.ClientKeystoreP12
	props["zookeeper.ssl.keystore.type"] = "PKCS12"
	props["zookeeper.ssl.keystore.password"] = sec.StorePassword
	cfg, warnings, err := ConfigFromProperties(props)
	require.NoError(t, err)
	require.Empty(t, warnings)
	ctx := testwait.Context(t, 2*time.Minute)
	conn := newConnector(t, cfg)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col := newCollector()
	col.read(ctx, "tls", streams[topic][0])
	col.waitAll(t, 0, 20, time.Minute)

	bad := cfg
	bad.Security.ZooKeeperSSLTruststoreLocation = sec.UntrustedCAFile
	bad.ZooKeeperConnectionTimeout = 3 * time.Second
	start := time.Now()
	_, err = New(ctx, bad)
	require.Error(t, err)
	t.Logf("after %v: %v", time.Since(start), err)
	require.ErrorContains(t, err, "zookeeper.ssl.truststore.location")
	require.Less(t, time.Since(start), 10*time.Second)

	plain := cfg
	plain.Security.ZooKeeperSSLClientEnable = false
	plain.ZooKeeperConnectionTimeout = 2 * time.Second
	_, err = New(ctx, plain)
	require.Error(t, err, "the TLS port does not speak plaintext")
}

// TestSecuredPropertiesExample: the properties file of the README's
// "Secured clusters" section works as written, once its host names, paths
// and passwords are those of the test cluster.
func TestSecuredPropertiesExample(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedSecure(t)
	sec := c.Security()
	topic := newTopic(t, c, 2, 40)
	f, err := os.Open("testdata/secured.properties")
	require.NoError(t, err)
	props, err := ParseProperties(f)
	require.NoError(t, f.Close())
	require.NoError(t, err)
	for k, v := range props {
		v = strings.ReplaceAll(v, "zk1.example.com:2182,zk2.example.com:2182", sec.ZooKeeperTLS())
		v = strings.ReplaceAll(v, "/etc/kafka/ca.pem", sec.CAFile)
		v = strings.ReplaceAll(v, `username="alice"`, `username="`+sec.User+`"`)
		v = strings.ReplaceAll(v, `password="alice-secret"`, `password="`+sec.Password+`"`)
		props[k] = v
	}
	props["group.id"] = testcluster.UniqueName("g-example")
	props["zookeeper.session.timeout.ms"] = "4000"
	props["zookeeper.connection.timeout.ms"] = "30000" // a first TLS handshake with a busy ZooKeeper can take seconds
	cfg, warnings, err := ConfigFromProperties(props)
	require.NoError(t, err)
	require.Empty(t, warnings)
	require.Equal(t, "SASL_SSL", cfg.Security.SecurityProtocol)
	ctx := testwait.Context(t, 2*time.Minute)
	conn := newConnector(t, cfg)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col := newCollector()
	col.read(ctx, "example", streams[topic][0])
	col.waitAll(t, 0, 40, time.Minute)
	require.NoError(t, conn.CommitOffsets(ctx))
	acl := aclOf(t, c, zkutil.OffsetPath(cfg.GroupID, topic, 0))
	require.Len(t, acl, 2, "offsets are secured: %+v", acl)
}
