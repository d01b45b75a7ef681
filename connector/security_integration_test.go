package connector

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// secureProps are the properties of each way of reaching the secure
// cluster's brokers, as a user would write them.
func secureProps(sec *testcluster.Security) map[string]map[string]string {
	return map[string]map[string]string{
		"SSL": {
			"security.protocol":       "SSL",
			"ssl.truststore.location": sec.TruststoreP12,
			"ssl.truststore.type":     "PKCS12",
			"ssl.truststore.password": sec.StorePassword,
		},
		"mTLS": {
			"security.protocol":        "SSL",
			"zkconsumer.listener.name": testcluster.ListenerMTLS,
			"ssl.ca.location":          sec.CAFile,
			"ssl.certificate.location": sec.ClientCertFile,
			"ssl.key.location":         sec.ClientKeyFile,
		},
		"SASL_SSL SCRAM-SHA-256": {
			"security.protocol":       "SASL_SSL",
			"ssl.truststore.location": sec.CAFile,
			"ssl.truststore.type":     "PEM",
			"sasl.mechanism":          "SCRAM-SHA-256",
			"sasl.jaas.config":        `org.apache.kafka.common.security.scram.ScramLoginModule required username="` + sec.User + `" password="` + sec.Password + `";`,
		},
		"SASL_SSL SCRAM-SHA-512": {
			"security.protocol": "SASL_SSL",
			"ssl.ca.location":   sec.CAFile,
			"sasl.mechanism":    "SCRAM-SHA-512",
			"sasl.username":     sec.User,
			"sasl.password":     sec.Password,
		},
		"SASL_SSL OAUTHBEARER": { // with SecurityConfig.TokenProvider set in code
			"security.protocol": "SASL_SSL",
			"ssl.ca.location":   sec.CAFile,
			"sasl.mechanism":    "OAUTHBEARER",
		},
		"SASL_PLAINTEXT PLAIN": {
			"security.protocol": "SASL_PLAINTEXT",
			"sasl.mechanism":    "PLAIN",
			"sasl.jaas.config":  `org.apache.kafka.common.security.plain.PlainLoginModule required username="` + sec.User + `" password="` + sec.Password + `";`,
		},
	}
}

// secureConfig is testConfig with the security properties of way.
func secureConfig(t *testing.T, c *testcluster.Cluster, group, way string) Config {
	t.Helper()
	props := props(testConfig(c, group))
	extra, ok := secureProps(c.Security())[way]
	require.True(t, ok, way)
	for k, v := range extra {
		props[k] = v
	}
	oauth := way == "SASL_SSL OAUTHBEARER"
	if oauth {
		// Valid only with the token provider, which is set in code: so is
		// the rest, as an application would.
		for k := range extra {
			delete(props, k)
		}
	}
	cfg, warnings, err := ConfigFromProperties(props)
	require.NoError(t, err)
	require.Empty(t, warnings)
	if oauth {
		cfg.Security = SecurityConfig{
			SecurityProtocol:      extra["security.protocol"],
			SSLTruststoreLocation: extra["ssl.ca.location"],
			SASLMechanism:         extra["sasl.mechanism"],
			TokenProvider:         unsignedTokens{sub: c.Security().User},
		}
		require.NoError(t, cfg.Validate())
	}
	return cfg
}

// unsignedTokens makes unsigned JWTs, which Kafka's default OAUTHBEARER
// validator accepts, through the connector's own TokenProvider and
// AccessToken types, as an application would.
type unsignedTokens struct{ sub string }

func (u unsignedTokens) Token() (*AccessToken, error) {
	enc := base64.RawURLEncoding.EncodeToString
	now := time.Now().Unix()
	claims := fmt.Sprintf(`{"sub":%q,"iat":%d,"exp":%d}`, u.sub, now, now+3600)
	return &AccessToken{Token: enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(claims)) + "."}, nil
}

// TestSecureConsumeAndCommit: over each protocol and mechanism, a member
// reads every message and commits its offsets, to ZooKeeper or (SCRAM-512,
// whose offset commits go through the coordinator over SASL_SSL too) to
// Kafka.
func TestSecureConsumeAndCommit(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedSecure(t)
	for _, way := range []string{"SSL", "mTLS", "SASL_SSL SCRAM-SHA-256", "SASL_SSL SCRAM-SHA-512", "SASL_SSL OAUTHBEARER", "SASL_PLAINTEXT PLAIN"} {
		t.Run(way, func(t *testing.T) {
			const n = 300
			topic := newTopic(t, c, 3, n)
			group := testcluster.UniqueName("g-sec")
			cfg := secureConfig(t, c, group, way)
			kafkaOffsets := way == "SASL_SSL SCRAM-SHA-512"
			if kafkaOffsets {
				cfg.OffsetsStorage = OffsetsStorageKafka
				cfg.DualCommitEnabled = DualCommitOff
			}
			conn, err := New(t.Context(), cfg)
			require.NoError(t, err)
			go func() {
				for err := range conn.Errors() {
					t.Logf("consumer error: %v", err)
				}
			}()
			ctx := testwait.Context(t, 2*time.Minute)
			streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
			require.NoError(t, err)
			col := newCollector()
			col.read(ctx, "m", streams[topic][0])
			rs := col.waitAll(t, 0, n, time.Minute)
			require.Len(t, rs, n)
			require.NoError(t, conn.Shutdown(ctx))
			col.wg.Wait()
			var committed map[int32]int64
			if kafkaOffsets {
				committed = fetchKafkaOffsets(t, c, group, topic, 3)
				require.Empty(t, readOffsets(t, c, group, topic, 3), "no ZooKeeper offsets without dual commit")
			} else {
				committed = readOffsets(t, c, group, topic, 3)
			}
			var total int64
			for _, off := range committed {
				total += off
			}
			require.Equal(t, int64(n), total, "committed %v", committed)
		})
	}
}

// TestSecureRebalance: two members over SSL share a topic; the second one's
// arrival moves partitions to it and nothing is lost.
func TestSecureRebalance(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedSecure(t)
	const n = 400
	topic := newTopic(t, c, 4, n)
	group := testcluster.UniqueName("g-secreb")
	ctx := testwait.Context(t, 3*time.Minute)
	col := newCollector()
	first := newConnector(t, secureConfig(t, c, group, "SSL"))
	s1, err := first.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col.read(ctx, "first", s1[topic][0])
	col.waitAll(t, 0, n, time.Minute)

	second := newConnector(t, secureConfig(t, c, group, "mTLS"))
	s2, err := second.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col.read(ctx, "second", s2[topic][0])
	_, err = c.Produce(ctx, topic, n, testcluster.ProduceOptions{Partition: -1, ValueSize: 64, FirstSeq: n})
	require.NoError(t, err)
	rs := col.waitAll(t, n, n, time.Minute)
	byMember := map[string]bool{}
	for _, r := range rs {
		if r.Seq >= n {
			byMember[r.Consumer] = true
		}
	}
	require.True(t, byMember["second"], "the second member got partitions after the rebalance")
	require.True(t, byMember["first"], "the first member kept some")
}

// TestSecureFailures: misconfigurations fail fast and name the key to fix;
// none falls back to plaintext.
func TestSecureFailures(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedSecure(t)
	sec := c.Security()
	topic := newTopic(t, c, 1, 10)

	t.Run("missing keystore file", func(t *testing.T) {
		cfg := secureConfig(t, c, testcluster.UniqueName("g-secf"), "SSL")
		cfg.Security.SSLKeystoreLocation = sec.Dir + "/nowhere.p12"
		_, err := New(t.Context(), cfg)
		var ce *ConfigError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, "ssl.keystore.location", ce.Key)
		require.ErrorIs(t, err, ErrInvalidConfig)
	})
	t.Run("GSSAPI", func(t *testing.T) {
		cfg := secureConfig(t, c, testcluster.UniqueName("g-secf"), "SASL_PLAINTEXT PLAIN")
		cfg.Security.SASLMechanism = ""
		_, err := New(t.Context(), cfg)
		require.ErrorContains(t, err, "sasl.mechanism")
	})

	for _, tc := range []struct {
		name, way string
		change    func(*Config)
		want      []string
	}{
		{"bad password", "SASL_SSL SCRAM-SHA-512", func(c *Config) { c.Security.SASLPassword = "not-the-password" }, []string{"sasl.username and sasl.password"}},
		{"untrusted CA", "SSL", func(c *Config) {
			c.Security.SSLTruststoreLocation, c.Security.SSLTruststoreType, c.Security.SSLTruststorePassword = sec.UntrustedCAFile, "", ""
		}, []string{"ssl.truststore.location", "unknown authority"}},
		{"wrong host", "SSL", func(c *Config) { c.Security.ListenerName = testcluster.ListenerWrongHost }, []string{"ssl.endpoint.identification.algorithm"}},
		{"mechanism not enabled", "SASL_PLAINTEXT PLAIN", func(c *Config) {
			c.Security.SASLMechanism = "SCRAM-SHA-256"
			c.Security.SASLJAASConfig = strings.Replace(c.Security.SASLJAASConfig, "plain.PlainLoginModule", "scram.ScramLoginModule", 1)
		}, []string{"sasl.mechanism SCRAM-SHA-256"}},
		{"no client certificate", "mTLS", func(c *Config) { c.Security.SSLCertificateLocation, c.Security.SSLKeyLocation = "", "" }, []string{"ssl.keystore.location"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := secureConfig(t, c, testcluster.UniqueName("g-secf"), tc.way)
			tc.change(&cfg)
			conn := newConnector(t, cfg)
			ctx := testwait.Context(t, time.Minute)
			streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
			require.NoError(t, err)
			start := time.Now()
			select {
			case err := <-conn.Errors():
				t.Logf("after %v: %v", time.Since(start), err)
				for _, w := range tc.want {
					require.ErrorContains(t, err, w)
				}
				require.NotContains(t, err.Error(), "not-the-password")
				require.NotContains(t, err.Error(), sec.Password)
			case <-time.After(20 * time.Second):
				t.Fatal("no error reported")
			}
			// Nothing was read through another listener.
			cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			defer cancel()
			_, err = streams[topic][0].Next(cctx)
			require.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
		})
	}
}

// TestSecureKafkaMode: a Kafka-coordinated member (no ZooKeeper) reaches
// the group coordinator, the brokers' metadata and the partitions' leaders
// over SASL_SSL with SCRAM-SHA-512 and over mTLS, reads every message and
// commits its offsets to Kafka.
func TestSecureKafkaMode(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedSecure(t)
	for way, listener := range map[string]string{"SASL_SSL SCRAM-SHA-512": testcluster.ListenerSASLSSL, "mTLS": testcluster.ListenerMTLS} {
		t.Run(way, func(t *testing.T) {
			const n = 300
			topic := newTopic(t, c, 3, n)
			group := testcluster.UniqueName("g-sec-kafka")
			cfg := secureConfig(t, c, group, way)
			k := kafkaConfig(c, group)
			cfg.GroupCoordination, cfg.ZooKeeperConnect = k.GroupCoordination, ""
			cfg.BootstrapServers = c.Security().Listener(listener, 0)
			cfg.SessionTimeout, cfg.HeartbeatInterval, cfg.MaxPollInterval = k.SessionTimeout, k.HeartbeatInterval, k.MaxPollInterval
			conn, err := New(t.Context(), cfg)
			require.NoError(t, err)
			go func() {
				for err := range conn.Errors() {
					t.Logf("consumer error: %v", err)
				}
			}()
			ctx := testwait.Context(t, 2*time.Minute)
			streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
			require.NoError(t, err)
			col := newCollector()
			col.read(ctx, "m", streams[topic][0])
			require.Len(t, col.waitAll(t, 0, n, time.Minute), n)
			require.NoError(t, conn.Shutdown(ctx))
			col.wg.Wait()
			var total int64
			for _, off := range fetchKafkaOffsets(t, c, group, topic, 3) {
				total += off
			}
			require.Equal(t, int64(n), total)
		})
	}
}
