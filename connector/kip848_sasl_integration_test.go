package connector

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// consumerProtocolSASLConfig is consumerProtocolConfig reaching the secure
// KRaft cluster's SASL_SSL listener with SCRAM-SHA-512.
func consumerProtocolSASLConfig(c *testcluster.Cluster, group string) Config {
	sec := c.Security()
	cfg := consumerProtocolConfig(c, group)
	cfg.BootstrapServers = sec.Listener(testcluster.ListenerSASLSSL, 0)
	cfg.Security = SecurityConfig{SecurityProtocol: "SASL_SSL", SSLTruststoreLocation: sec.CAFile, SSLTruststoreType: "PEM",
		SASLMechanism: "SCRAM-SHA-512", SASLUsername: sec.User, SASLPassword: sec.Password}
	return cfg
}

// TestConsumerProtocolSASLWithJava is TestConsumerProtocolMixedWithJava
// over SASL_SSL on a Kafka 4.x KRaft cluster: a zkconsumer member with
// group.protocol=consumer and SCRAM-SHA-512 (ConsumerGroupHeartbeat and
// OffsetCommit v9 on kip848's connection, authenticated as sarama's are)
// and Kafka 4.x's Java console consumer with group.protocol=consumer and
// SCRAM-SHA-256 share one group; every message is read exactly once across
// the two and their hand-overs. (Before, group.protocol=consumer refused
// SASL.)
func TestConsumerProtocolSASLWithJava(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedSecureKRaft(t)
	sec := c.Security()
	props := filepath.Join(t.TempDir(), "java-sasl.properties")
	require.NoError(t, os.WriteFile(props, []byte("security.protocol=SASL_SSL\n"+
		"sasl.mechanism=SCRAM-SHA-256\n"+
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="`+sec.User+`" password="`+sec.Password+"\";\n"+
		"ssl.truststore.location="+sec.CAFile+"\n"+
		"ssl.truststore.type=PEM\n"), 0o600))
	cfg := consumerProtocolSASLConfig(c, testcluster.UniqueName("g-kip848-sasl"))
	mixedWithJava848(t, c, cfg, cfg.BootstrapServers, "--consumer.config", props)
}

// TestConsumerProtocolWrongPasswordIsFatal: with group.protocol=consumer,
// a wrong SASL password makes CreateMessageStreams fail within seconds,
// with an error that names the user and the settings to fix (and no
// secret), matches ErrGroupFatal and ErrAuthentication, and reaches
// Errors too.
func TestConsumerProtocolWrongPasswordIsFatal(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedSecureKRaft(t)
	sec := c.Security()
	topic := newTopic(t, c, 1, 10)
	cfg := consumerProtocolSASLConfig(c, testcluster.UniqueName("g-kip848-badpw"))
	cfg.Security.SASLPassword = "not-the-password"
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
	require.ErrorContains(t, err, "sasl.username and sasl.password")
	require.ErrorContains(t, err, `"`+sec.User+`"`)
	require.NotContains(t, err.Error(), "not-the-password")
	require.NotContains(t, err.Error(), sec.Password)
	reported := errs.await(t, 5*time.Second, "the fatal error", func(err error) bool { return errors.Is(err, ErrGroupFatal) })
	require.ErrorIs(t, reported, ErrAuthentication)
}
