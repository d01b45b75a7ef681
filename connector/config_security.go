package connector

import (
	"crypto/tls"
	"errors"
	"time"

	"github.com/IBM/sarama"
	"github.com/go-zookeeper/zk"

	"github.com/zkconsumer/zkconsumer/internal/secure"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
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
//     skip the host name check: EndpointIdentificationNone);
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
// Programs may also set TLS, a *tls.Config to start from. Fields holding
// secrets are marked "secret": String and GoString, and so %v and %#v of a
// Config, print them as hidden, and no error of the connector contains
// them.
type SecurityConfig struct {
	// SecurityProtocol is security.protocol: PLAINTEXT (the default when
	// empty), SSL, SASL_PLAINTEXT or SASL_SSL, case-insensitive. It also
	// selects which listener of each broker is connected to (see
	// ListenerName).
	SecurityProtocol string
	// ListenerName is zkconsumer.listener.name, a zkconsumer extension,
	// default empty: the name of the broker listener to connect to, such
	// as "EXTERNAL", for brokers with several listeners of the same
	// security protocol. Empty picks each broker's first listener whose
	// protocol is SecurityProtocol.
	ListenerName string

	// SSLTruststoreLocation is ssl.truststore.location (librdkafka:
	// ssl.ca.location): a file of the certificate authorities that sign
	// the brokers' certificates. Empty, with SSLTruststoreCertificates
	// empty too, trusts the system's authorities.
	SSLTruststoreLocation string
	// SSLTruststoreType is ssl.truststore.type: PEM or PKCS12. Kafka's
	// default, JKS, cannot be read (convert it with keytool
	// -importkeystore -deststoretype PKCS12); empty guesses from the
	// file's contents.
	SSLTruststoreType string
	// SSLTruststorePassword is ssl.truststore.password, secret: the
	// password of a PKCS12 trust store.
	SSLTruststorePassword string
	// SSLTruststoreCertificates is ssl.truststore.certificates: the
	// trusted certificates themselves, in PEM, instead of a file.
	SSLTruststoreCertificates string
	// SSLKeystoreLocation is ssl.keystore.location: a PEM or PKCS12 file
	// with this client's certificate chain and private key, for brokers
	// that require client certificates (ssl.client.auth=required).
	SSLKeystoreLocation string
	// SSLKeystoreType is ssl.keystore.type: PEM or PKCS12; empty guesses
	// from the file's contents.
	SSLKeystoreType string
	// SSLKeystorePassword is ssl.keystore.password, secret: the password
	// of a PKCS12 key store.
	SSLKeystorePassword string
	// SSLKeyPassword is ssl.key.password (librdkafka too), secret: the
	// password of an encrypted PEM private key.
	SSLKeyPassword string
	// SSLKeystoreCertificateChain is ssl.keystore.certificate.chain: the
	// client's certificate chain in PEM, instead of a file. It goes with
	// SSLKeystoreKey.
	SSLKeystoreCertificateChain string
	// SSLKeystoreKey is ssl.keystore.key, secret: the client's private key
	// in PEM, instead of a file.
	SSLKeystoreKey string
	// SSLCertificateLocation is librdkafka's ssl.certificate.location: a
	// PEM file with the client's certificate chain. It goes with
	// SSLKeyLocation.
	SSLCertificateLocation string
	// SSLKeyLocation is librdkafka's ssl.key.location: a PEM file with the
	// client's private key, encrypted with SSLKeyPassword or not.
	SSLKeyLocation string
	// SSLEndpointIdentificationAlgorithm is
	// ssl.endpoint.identification.algorithm, default
	// EndpointIdentificationHTTPS (the zero value, "https"): the broker's
	// certificate must be valid for the host name or IP address connected
	// to. EndpointIdentificationNone (the empty value in properties) skips
	// that check (the certificate must still be signed by a trusted
	// authority).
	SSLEndpointIdentificationAlgorithm EndpointIdentification

	// SASLMechanism is sasl.mechanism: PLAIN, SCRAM-SHA-256,
	// SCRAM-SHA-512 or OAUTHBEARER. Empty means Kafka's default, GSSAPI,
	// which zkconsumer does not support, so a SASL protocol needs it set.
	SASLMechanism string
	// SASLJAASConfig is sasl.jaas.config, secret: Kafka's
	// "org.apache.kafka.common.security.plain.PlainLoginModule required
	// username="..." password="...";" (or ScramLoginModule), from which the
	// user name and password are taken when SASLUsername is empty.
	SASLJAASConfig string
	// SASLUsername is librdkafka's sasl.username, for PLAIN and SCRAM.
	SASLUsername string
	// SASLPassword is librdkafka's sasl.password, secret.
	SASLPassword string
	// TokenProvider supplies the tokens of SASL/OAUTHBEARER. It has no
	// property; programs set it in code.
	TokenProvider TokenProvider
	// TLS, if set, is the base of the TLS configuration (it has no
	// property): programs that build their own *tls.Config (certificates
	// from a vault, say) set it; the ssl.* settings above are then added
	// to a clone of it.
	TLS *tls.Config

	// ZooKeeperAuth is zookeeper.auth, a zkconsumer extension, secret:
	// "user:password" credentials of ZooKeeper's digest scheme, added to
	// the ZooKeeper session. Empty reads the environment variable
	// ZKCONSUMER_ZOOKEEPER_AUTH; empty there too means no credentials.
	ZooKeeperAuth string
	// ZooKeeperSetACL is zookeeper.set.acl (the broker's key), default
	// false: the nodes the consumer creates get an ACL that lets everyone
	// read and only the creating identity (ZooKeeperAuth) change them.
	// It needs ZooKeeperAuth.
	ZooKeeperSetACL bool
	// ZooKeeperSSLClientEnable is zookeeper.ssl.client.enable, default
	// false: connect to ZooKeeper's secure client port with TLS.
	ZooKeeperSSLClientEnable bool
	// ZooKeeperSSLTruststoreLocation, ZooKeeperSSLTruststoreType and
	// ZooKeeperSSLTruststorePassword (secret) are
	// zookeeper.ssl.truststore.location, .type and .password: the
	// authorities that sign ZooKeeper's certificate, as for the brokers.
	ZooKeeperSSLTruststoreLocation string
	ZooKeeperSSLTruststoreType     string
	ZooKeeperSSLTruststorePassword string
	// ZooKeeperSSLKeystoreLocation, ZooKeeperSSLKeystoreType and
	// ZooKeeperSSLKeystorePassword (secret) are
	// zookeeper.ssl.keystore.location, .type and .password: a client
	// certificate for ZooKeeper servers that require one.
	ZooKeeperSSLKeystoreLocation string
	ZooKeeperSSLKeystoreType     string
	ZooKeeperSSLKeystorePassword string
	// ZooKeeperSSLEndpointIdentificationEnable is
	// zookeeper.ssl.endpoint.identification.enable, default
	// ZooKeeperEndpointIdentificationOn (the zero value, "true"):
	// ZooKeeper's certificate must name the host connected to;
	// ZooKeeperEndpointIdentificationOff ("false") skips that check.
	ZooKeeperSSLEndpointIdentificationEnable ZooKeeperEndpointIdentification
}

// TokenProvider supplies the tokens of SASL/OAUTHBEARER
// (SecurityConfig.TokenProvider). Token is called for every new broker
// connection, so it should cache a token until shortly before it expires.
type TokenProvider interface {
	Token() (*AccessToken, error)
}

// AccessToken is one SASL/OAUTHBEARER token, from a TokenProvider, with
// the SASL extensions to send along with it.
type AccessToken struct {
	// Token is the token itself, a JWT for Kafka's default validator.
	Token string
	// Extensions are optional key-value pairs sent with the token in the
	// client's initial SASL response (KIP-342, Kafka 2.1+); brokers
	// ignore the ones they do not expect.
	Extensions map[string]string
}

// String lists the fields that are set, secrets hidden.
func (s SecurityConfig) String() string { return s.settings().String() }

// GoString is String, so that %#v hides secrets too.
func (s SecurityConfig) GoString() string { return "connector.SecurityConfig" + s.String() }

// settings is s in internal/secure's terms: the same fields, copied one
// by one (TestSecurityConfigMirrorsSettings and
// TestSecurityConfigCopiesEveryField keep the two types and this copy in
// step), the token provider adapted and the endpoint identification
// options turned into the optional values internal/secure keeps (nil for
// the default).
func (s SecurityConfig) settings() secure.Settings {
	out := secure.Settings{
		SecurityProtocol:               s.SecurityProtocol,
		ListenerName:                   s.ListenerName,
		SSLTruststoreLocation:          s.SSLTruststoreLocation,
		SSLTruststoreType:              s.SSLTruststoreType,
		SSLTruststorePassword:          s.SSLTruststorePassword,
		SSLTruststoreCertificates:      s.SSLTruststoreCertificates,
		SSLKeystoreLocation:            s.SSLKeystoreLocation,
		SSLKeystoreType:                s.SSLKeystoreType,
		SSLKeystorePassword:            s.SSLKeystorePassword,
		SSLKeyPassword:                 s.SSLKeyPassword,
		SSLKeystoreCertificateChain:    s.SSLKeystoreCertificateChain,
		SSLKeystoreKey:                 s.SSLKeystoreKey,
		SSLCertificateLocation:         s.SSLCertificateLocation,
		SSLKeyLocation:                 s.SSLKeyLocation,
		SASLMechanism:                  s.SASLMechanism,
		SASLJAASConfig:                 s.SASLJAASConfig,
		SASLUsername:                   s.SASLUsername,
		SASLPassword:                   s.SASLPassword,
		TLS:                            s.TLS,
		ZooKeeperAuth:                  s.ZooKeeperAuth,
		ZooKeeperSetACL:                s.ZooKeeperSetACL,
		ZooKeeperSSLClientEnable:       s.ZooKeeperSSLClientEnable,
		ZooKeeperSSLTruststoreLocation: s.ZooKeeperSSLTruststoreLocation,
		ZooKeeperSSLTruststoreType:     s.ZooKeeperSSLTruststoreType,
		ZooKeeperSSLTruststorePassword: s.ZooKeeperSSLTruststorePassword,
		ZooKeeperSSLKeystoreLocation:   s.ZooKeeperSSLKeystoreLocation,
		ZooKeeperSSLKeystoreType:       s.ZooKeeperSSLKeystoreType,
		ZooKeeperSSLKeystorePassword:   s.ZooKeeperSSLKeystorePassword,
	}
	if s.TokenProvider != nil {
		out.TokenProvider = secureTokens{s.TokenProvider}
	}
	switch s.SSLEndpointIdentificationAlgorithm {
	case EndpointIdentificationHTTPS:
	case EndpointIdentificationNone:
		out.SSLEndpointIdentificationAlgorithm = new("")
	default: // refused by Validate
		out.SSLEndpointIdentificationAlgorithm = new(s.SSLEndpointIdentificationAlgorithm.String())
	}
	if s.ZooKeeperSSLEndpointIdentificationEnable != ZooKeeperEndpointIdentificationOn {
		out.ZooKeeperSSLEndpointIdentificationEnable = new(false)
	}
	return out
}

// setSettings sets s from v, the inverse of settings, keeping s's
// TokenProvider (it has no property, so v, read from properties, never
// carries one of its own). It returns the *ConfigErrors of endpoint
// identification values that the option types cannot hold.
func (s *SecurityConfig) setSettings(v secure.Settings) []error {
	*s = SecurityConfig{
		SecurityProtocol:               v.SecurityProtocol,
		ListenerName:                   v.ListenerName,
		SSLTruststoreLocation:          v.SSLTruststoreLocation,
		SSLTruststoreType:              v.SSLTruststoreType,
		SSLTruststorePassword:          v.SSLTruststorePassword,
		SSLTruststoreCertificates:      v.SSLTruststoreCertificates,
		SSLKeystoreLocation:            v.SSLKeystoreLocation,
		SSLKeystoreType:                v.SSLKeystoreType,
		SSLKeystorePassword:            v.SSLKeystorePassword,
		SSLKeyPassword:                 v.SSLKeyPassword,
		SSLKeystoreCertificateChain:    v.SSLKeystoreCertificateChain,
		SSLKeystoreKey:                 v.SSLKeystoreKey,
		SSLCertificateLocation:         v.SSLCertificateLocation,
		SSLKeyLocation:                 v.SSLKeyLocation,
		SASLMechanism:                  v.SASLMechanism,
		SASLJAASConfig:                 v.SASLJAASConfig,
		SASLUsername:                   v.SASLUsername,
		SASLPassword:                   v.SASLPassword,
		TokenProvider:                  s.TokenProvider,
		TLS:                            v.TLS,
		ZooKeeperAuth:                  v.ZooKeeperAuth,
		ZooKeeperSetACL:                v.ZooKeeperSetACL,
		ZooKeeperSSLClientEnable:       v.ZooKeeperSSLClientEnable,
		ZooKeeperSSLTruststoreLocation: v.ZooKeeperSSLTruststoreLocation,
		ZooKeeperSSLTruststoreType:     v.ZooKeeperSSLTruststoreType,
		ZooKeeperSSLTruststorePassword: v.ZooKeeperSSLTruststorePassword,
		ZooKeeperSSLKeystoreLocation:   v.ZooKeeperSSLKeystoreLocation,
		ZooKeeperSSLKeystoreType:       v.ZooKeeperSSLKeystoreType,
		ZooKeeperSSLKeystorePassword:   v.ZooKeeperSSLKeystorePassword,
	}
	var errs []error
	s.SSLEndpointIdentificationAlgorithm = EndpointIdentificationHTTPS
	if a := v.SSLEndpointIdentificationAlgorithm; a != nil {
		if err := s.SSLEndpointIdentificationAlgorithm.UnmarshalText([]byte(*a)); err != nil {
			errs = append(errs, err)
		}
	}
	s.ZooKeeperSSLEndpointIdentificationEnable = ZooKeeperEndpointIdentificationOn
	if e := v.ZooKeeperSSLEndpointIdentificationEnable; e != nil && !*e {
		s.ZooKeeperSSLEndpointIdentificationEnable = ZooKeeperEndpointIdentificationOff
	}
	return errs
}

// secureTokens adapts the application's TokenProvider to internal/secure's.
type secureTokens struct{ p TokenProvider }

func (t secureTokens) Token() (*secure.AccessToken, error) {
	tok, err := t.p.Token()
	if err != nil || tok == nil {
		return nil, err
	}
	return &secure.AccessToken{Token: tok.Token, Extensions: tok.Extensions}, nil
}

// security records the problems of s as ConfigErrors.
func (v *validator) security(s SecurityConfig) {
	endpointIdentificationEnum.check(v, uint8(s.SSLEndpointIdentificationAlgorithm))
	zooKeeperEndpointIdentificationEnum.check(v, uint8(s.ZooKeeperSSLEndpointIdentificationEnable))
	sec := s.settings()
	if _, ok := endpointIdentificationEnum.name(uint8(s.SSLEndpointIdentificationAlgorithm)); !ok {
		sec.SSLEndpointIdentificationAlgorithm = nil // reported above
	}
	v.errs = append(v.errs, securityConfigErrors(sec.Validate())...)
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
	v := s.settings()
	errs := securityConfigErrors(v.SetProperties(props))
	return append(errs, s.setSettings(v)...)
}

// securityClient loads the stores of c.Security; its errors are
// ConfigErrors naming the key to fix.
func (c *Config) securityClient() (*secure.Client, error) {
	sec, err := secure.New(c.Security.settings())
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
func (c *Config) zooKeeperSecurity(dial zk.Dialer) (zk.Dialer, []zksession.Auth, []zk.ACL, error) {
	sec := c.Security.settings()
	tlsDial, err := secure.ZooKeeperDialer(sec, dial)
	if err != nil {
		return nil, nil, nil, errors.Join(securityConfigErrors(err)...)
	}
	if tlsDial != nil {
		dial = tlsDial
	}
	return dial, secure.ZooKeeperCredentials(sec), secure.ZooKeeperACL(sec), nil
}
