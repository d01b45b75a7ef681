package connector

import (
	"errors"
	"time"

	"github.com/IBM/sarama"
	"github.com/go-zookeeper/zk"

	"github.com/zkconsumer/zkconsumer/internal/secure"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// SecurityConfig holds the security settings of a connector
// (Config.Security): TLS and SASL to the brokers, credentials, ACLs and
// TLS to ZooKeeper. Each field names its property; in short:
//
//   - security.protocol: PLAINTEXT (default), SSL, SASL_PLAINTEXT,
//     SASL_SSL; it also picks each broker's listener from its ZooKeeper
//     registration, or zkconsumer.listener.name names the listener;
//   - ssl.truststore.location/.type/.password (PEM or PKCS12) or
//     ssl.truststore.certificates; ssl.keystore.location/.type/.password,
//     ssl.key.password, or ssl.keystore.certificate.chain with
//     ssl.keystore.key, for client certificates;
//     ssl.endpoint.identification.algorithm (https by default, empty to
//     skip the host name check);
//   - librdkafka's ssl.ca.location, ssl.certificate.location,
//     ssl.key.location, sasl.username, sasl.password, sasl.mechanisms;
//   - sasl.mechanism PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (credentials from
//     sasl.jaas.config's PlainLoginModule or ScramLoginModule, or
//     sasl.username and sasl.password), or OAUTHBEARER with
//     TokenProvider set in code;
//   - zookeeper.auth (user:password, digest scheme; or the environment
//     variable ZKCONSUMER_ZOOKEEPER_AUTH), zookeeper.set.acl,
//     zookeeper.ssl.client.enable and zookeeper.ssl.* for TLS to ZooKeeper.
//
// Programs may also set TLS, a *tls.Config to start from. The String
// method, and so %v of a Config, hides every secret.
type SecurityConfig = secure.Settings

// security records the problems of s as ConfigErrors.
func (v *validator) security(s SecurityConfig) {
	v.errs = append(v.errs, securityConfigErrors(s.Validate())...)
}

// securityConfigErrors turns the *secure.KeyErrors joined in err into
// *ConfigErrors; other errors are kept.
func securityConfigErrors(err error) []error {
	if err == nil {
		return nil
	}
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	out := make([]error, 0, len(list))
	for _, e := range list {
		var ke *secure.KeyError
		if errors.As(e, &ke) {
			out = append(out, &ConfigError{Key: ke.Key, Value: ke.Value, Reason: ke.Reason})
			continue
		}
		out = append(out, e)
	}
	return out
}

// securityKeys lists the properties of SecurityConfig.
func securityKeys() []string { return secure.Keys() }

// setSecurityProperties sets the security keys of props into s.
func setSecurityProperties(s *SecurityConfig, props map[string]string) []error {
	return securityConfigErrors(s.SetProperties(props))
}

// securityClient loads the stores of c.Security; its errors are
// ConfigErrors naming the key to fix.
func (c *Config) securityClient() (*secure.Client, error) {
	sec, err := secure.New(c.Security)
	if err != nil {
		return nil, errors.Join(securityConfigErrors(err)...)
	}
	return sec, nil
}

// brokerSaramaConfig is the base configuration of the fetchers' and the
// leader finder's broker connections: sarama's defaults at the newest
// protocol version (sarama negotiates down per request), with the security
// settings applied unless sec is nil (for callers that set a dialer of
// their own first and apply sec around it). Connections go through dial
// (WithDialer) when it is not nil.
func brokerSaramaConfig(sec *secure.Client, socketTimeout time.Duration, dial Dialer) *sarama.Config {
	sc := sarama.NewConfig()
	sc.Version = sarama.V3_9_0_0
	sc.Net.DialTimeout = socketTimeout
	useDialer(sc, dial)
	if sec != nil {
		sec.Apply(sc)
	}
	return sc
}

// zooKeeperSecurity returns the dialer (TLS to ZooKeeper around dial, or
// dial itself), credentials and ACL of the ZooKeeper session.
func (c *Config) zooKeeperSecurity(dial zk.Dialer) (zk.Dialer, []zkutil.Auth, []zk.ACL, error) {
	tlsDial, err := secure.ZooKeeperDialer(c.Security, dial)
	if err != nil {
		return nil, nil, nil, errors.Join(securityConfigErrors(err)...)
	}
	if tlsDial != nil {
		dial = tlsDial
	}
	return dial, secure.ZooKeeperCredentials(c.Security), secure.ZooKeeperACL(c.Security), nil
}
