package secure_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/go-zookeeper/zk"

	"github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/kip848"
	"github.com/zkconsumer/zkconsumer/internal/secure"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
)

// registration reads broker 0's registration from ZooKeeper.
func registration(t *testing.T, c *testcluster.Cluster) zkbrokers.Broker {
	t.Helper()
	conn, events, err := zk.Connect(c.ZKServers(), 10*time.Second, zk.WithLogger(nopLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		for range events {
		}
	}()
	path := c.Chroot() + zkbrokers.BrokerIDPath(0)
	data, _, err := conn.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := zkbrokers.DecodeBroker(0, path, data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// ways are the two kinds of broker connection s is applied to: sarama's,
// and internal/kip848's Conn (the KIP-848 member's and JoinGroup v9's),
// dialled with coordinator.Dialer from the same sarama configuration.
var ways = []string{"sarama", "kip848"}

// connect applies s to a sarama config and asks the broker's endpoint for
// its metadata (way "sarama"), or opens a kip848.Conn, which asks for its
// ApiVersions (way "kip848").
func connect(t *testing.T, b zkbrokers.Broker, s secure.Settings, way string) error {
	t.Helper()
	cl, err := secure.New(s)
	if err != nil {
		return err
	}
	ep, err := cl.Endpoint(b)
	if err != nil {
		return err
	}
	sc := sarama.NewConfig()
	sc.Version = sarama.V3_9_0_0
	sc.Net.DialTimeout = 5 * time.Second
	sc.Net.ReadTimeout = 5 * time.Second
	sc.Net.WriteTimeout = 5 * time.Second
	cl.Apply(sc)
	if way == "kip848" {
		conn, err := kip848.Dial(context.Background(), coordinator.Dialer(sc), ep.Addr(), "secure-test", 5*time.Second)
		if err != nil {
			return cl.Explain(err)
		}
		defer conn.Close()
		if _, ok := conn.Versions(kip848.APIKeyApiVersions); !ok {
			return errors.New("no ApiVersions in the broker's answer")
		}
		return nil
	}
	br := sarama.NewBroker(ep.Addr())
	if err := br.Open(sc); err != nil {
		return cl.Explain(err)
	}
	defer br.Close()
	if ok, err := br.Connected(); !ok {
		return cl.Explain(err)
	}
	_, err = br.GetMetadata(&sarama.MetadataRequest{Version: 1})
	return cl.Explain(err)
}

func ptr[T any](v T) *T { return &v }

func TestConnectSecureListeners(t *testing.T) {
	c := testcluster.SharedSecure(t)
	sec := c.Security()
	b := registration(t, c)
	jaas := func(module string) string {
		return module + ` required username="` + sec.User + `" password="` + sec.Password + `";`
	}
	for _, tc := range []struct {
		name string
		s    secure.Settings
	}{
		{"SSL with PEM trust store", secure.Settings{SecurityProtocol: "SSL", SSLTruststoreLocation: sec.CAFile, SSLTruststoreType: "PEM"}},
		{"SSL with PKCS12 trust store", secure.Settings{SecurityProtocol: "ssl", SSLTruststoreLocation: sec.TruststoreP12, SSLTruststoreType: "PKCS12", SSLTruststorePassword: sec.StorePassword}},
		{"mTLS with PEM key store", secure.Settings{SecurityProtocol: "SSL", ListenerName: testcluster.ListenerMTLS, SSLTruststoreLocation: sec.CAFile, SSLKeystoreLocation: sec.ClientKeystorePEM, SSLKeystoreType: "PEM"}},
		{"mTLS with PKCS12 key store", secure.Settings{SecurityProtocol: "SSL", ListenerName: testcluster.ListenerMTLS, SSLTruststoreLocation: sec.CAFile, SSLKeystoreLocation: sec.ClientKeystoreP12, SSLKeystorePassword: sec.StorePassword}},
		{"mTLS with librdkafka names", secure.Settings{SecurityProtocol: "SSL", ListenerName: testcluster.ListenerMTLS, SSLTruststoreLocation: sec.CAFile, SSLCertificateLocation: sec.ClientCertFile, SSLKeyLocation: sec.ClientKeyFile}},
		{"SASL_SSL PLAIN", secure.Settings{SecurityProtocol: "SASL_SSL", SSLTruststoreLocation: sec.CAFile, SASLMechanism: "PLAIN", SASLJAASConfig: jaas("org.apache.kafka.common.security.plain.PlainLoginModule")}},
		{"SASL_SSL SCRAM-SHA-256", secure.Settings{SecurityProtocol: "SASL_SSL", SSLTruststoreLocation: sec.CAFile, SASLMechanism: "SCRAM-SHA-256", SASLJAASConfig: jaas("org.apache.kafka.common.security.scram.ScramLoginModule")}},
		{"SASL_SSL SCRAM-SHA-512 librdkafka", secure.Settings{SecurityProtocol: "SASL_SSL", SSLTruststoreLocation: sec.CAFile, SASLMechanism: "SCRAM-SHA-512", SASLUsername: sec.User, SASLPassword: sec.Password}},
		{"SASL_SSL OAUTHBEARER", secure.Settings{SecurityProtocol: "SASL_SSL", SSLTruststoreLocation: sec.CAFile, SASLMechanism: "OAUTHBEARER", TokenProvider: unsecuredToken{sub: sec.User}}},
		{"SASL_PLAINTEXT PLAIN", secure.Settings{SecurityProtocol: "SASL_PLAINTEXT", SASLMechanism: "PLAIN", SASLUsername: sec.User, SASLPassword: sec.Password}},
		{"wrong host skipped", secure.Settings{SecurityProtocol: "SSL", ListenerName: testcluster.ListenerWrongHost, SSLTruststoreLocation: sec.CAFile, SSLEndpointIdentificationAlgorithm: ptr("")}},
	} {
		for _, way := range ways {
			t.Run(tc.name+"/"+way, func(t *testing.T) {
				if err := connect(t, b, tc.s, way); err != nil {
					t.Fatalf("connect: %v", err)
				}
			})
		}
	}
}

func TestConnectFailures(t *testing.T) {
	c := testcluster.SharedSecure(t)
	sec := c.Security()
	b := registration(t, c)
	for _, tc := range []struct {
		name string
		s    secure.Settings
		want []string // substrings of the error
		not  string   // must not appear (a secret)
		auth bool     // matches secure.ErrAuthentication: retrying cannot help
	}{
		{"bad password", secure.Settings{SecurityProtocol: "SASL_SSL", SSLTruststoreLocation: sec.CAFile, SASLMechanism: "SCRAM-SHA-256", SASLUsername: sec.User, SASLPassword: "wrong-secret"},
			[]string{"SASL", "sasl.username", `"alice"`}, "wrong-secret", true},
		{"bad PLAIN password", secure.Settings{SecurityProtocol: "SASL_PLAINTEXT", SASLMechanism: "PLAIN", SASLUsername: sec.User, SASLPassword: "wrong-secret"},
			[]string{"SASL", "sasl.username"}, "wrong-secret", true},
		{"expired OAUTHBEARER token", secure.Settings{SecurityProtocol: "SASL_SSL", SSLTruststoreLocation: sec.CAFile, SASLMechanism: "OAUTHBEARER", TokenProvider: unsecuredToken{sub: sec.User, expired: true}},
			[]string{"SASL", "OAUTHBEARER"}, "", true},
		{"untrusted CA", secure.Settings{SecurityProtocol: "SSL", SSLTruststoreLocation: sec.UntrustedCAFile},
			[]string{"ssl.truststore.location", "unknown authority"}, "", true},
		{"wrong host", secure.Settings{SecurityProtocol: "SSL", ListenerName: testcluster.ListenerWrongHost, SSLTruststoreLocation: sec.CAFile},
			[]string{"ssl.endpoint.identification.algorithm", "127.0.0.2"}, "", true},
		{"mechanism not enabled", secure.Settings{SecurityProtocol: "SASL_PLAINTEXT", SASLMechanism: "SCRAM-SHA-256", SASLUsername: sec.User, SASLPassword: sec.Password},
			[]string{"sasl.mechanism SCRAM-SHA-256"}, sec.Password, true},
		{"missing keystore", secure.Settings{SecurityProtocol: "SSL", SSLTruststoreLocation: sec.CAFile, SSLKeystoreLocation: sec.Dir + "/missing.p12", SSLKeystorePassword: "x"},
			[]string{"ssl.keystore.location", "no such file"}, "", false},
		{"no client certificate", secure.Settings{SecurityProtocol: "SSL", ListenerName: testcluster.ListenerMTLS, SSLTruststoreLocation: sec.CAFile},
			[]string{"ssl.keystore.location"}, "", true},
		{"TLS to a SASL_PLAINTEXT listener", secure.Settings{SecurityProtocol: "SSL", ListenerName: testcluster.ListenerSASLPlaintext, SSLTruststoreLocation: sec.CAFile},
			[]string{"listener"}, "", false},
	} {
		for _, way := range ways {
			t.Run(tc.name+"/"+way, func(t *testing.T) {
				start := time.Now()
				err := connect(t, b, tc.s, way)
				took := time.Since(start)
				if err == nil {
					t.Fatal("connected")
				}
				t.Logf("error after %v: %v", took, err)
				if took > 8*time.Second {
					t.Errorf("took %v to fail", took)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error does not mention %q", w)
					}
				}
				if tc.not != "" && strings.Contains(err.Error(), tc.not) {
					t.Errorf("error shows the secret")
				}
				if got := errors.Is(err, secure.ErrAuthentication); got != tc.auth {
					t.Errorf("errors.Is(err, ErrAuthentication) = %v, want %v", got, tc.auth)
				}
			})
		}
	}
}

// unsecuredToken makes unsigned JWTs, which Kafka's default OAUTHBEARER
// validator accepts unless they expired.
type unsecuredToken struct {
	sub     string
	expired bool
}

func (u unsecuredToken) Token() (*secure.AccessToken, error) {
	enc := base64.RawURLEncoding.EncodeToString
	now := time.Now().Unix()
	if u.expired {
		now -= 7200
	}
	claims := fmt.Sprintf(`{"sub":%q,"iat":%d,"exp":%d}`, u.sub, now, now+3600)
	return &secure.AccessToken{Token: enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(claims)) + "."}, nil
}
