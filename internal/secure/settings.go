package secure

import (
	"crypto/tls"
	"os"
	"strconv"
	"strings"
)

// Security protocols (security.protocol), as Kafka spells them.
const (
	ProtocolPlaintext     = "PLAINTEXT"
	ProtocolSSL           = "SSL"
	ProtocolSASLPlaintext = "SASL_PLAINTEXT"
	ProtocolSASLSSL       = "SASL_SSL"
)

// SASL mechanisms (sasl.mechanism) zkconsumer supports.
const (
	MechanismPlain       = "PLAIN"
	MechanismSCRAMSHA256 = "SCRAM-SHA-256"
	MechanismSCRAMSHA512 = "SCRAM-SHA-512"
	MechanismOAuthBearer = "OAUTHBEARER"
	// MechanismGSSAPI is Kafka's default mechanism (Kerberos), which
	// zkconsumer does not support.
	MechanismGSSAPI = "GSSAPI"
)

// Store types (ssl.truststore.type, ssl.keystore.type).
const (
	StoreTypePEM    = "PEM"
	StoreTypePKCS12 = "PKCS12"
	StoreTypeJKS    = "JKS"
)

// EndpointIdentificationHTTPS is the default of
// ssl.endpoint.identification.algorithm: the broker's certificate must name
// the host connected to.
const EndpointIdentificationHTTPS = "https"

// ZooKeeperAuthEnv is the environment variable that supplies
// zookeeper.auth when the configuration leaves it empty, so that the
// password need not be written in a properties file.
const ZooKeeperAuthEnv = "ZKCONSUMER_ZOOKEEPER_AUTH"

// Settings are the security settings of a client: how it reaches the
// brokers and ZooKeeper. The zero value is PLAINTEXT without any
// authentication, Kafka's default; values are those of Kafka's Java
// clients unless said otherwise.
//
// The fields mirror connector.SecurityConfig one for one, where each is
// documented for applications; the connector converts its SecurityConfig
// into Settings field by field (its TestSecurityConfigMirrorsSettings and
// TestSecurityConfigCopiesEveryField keep the two in step). Each comment
// below names the field's property.
//
// Fields holding secrets (the secret keys of properties) print as Hidden
// in String, GoString and %v (TestStringListsEveryField keeps String in
// step with the fields), and no error of this package contains them.
type Settings struct {
	SecurityProtocol string // security.protocol
	ListenerName     string // zkconsumer.listener.name

	SSLTruststoreLocation     string // ssl.truststore.location, librdkafka's ssl.ca.location
	SSLTruststoreType         string // ssl.truststore.type
	SSLTruststorePassword     string // ssl.truststore.password, secret
	SSLTruststoreCertificates string // ssl.truststore.certificates
	SSLKeystoreLocation       string // ssl.keystore.location
	SSLKeystoreType           string // ssl.keystore.type
	SSLKeystorePassword       string // ssl.keystore.password, secret
	SSLKeyPassword            string // ssl.key.password, secret
	// ssl.keystore.certificate.chain and ssl.keystore.key (secret).
	SSLKeystoreCertificateChain string
	SSLKeystoreKey              string
	// librdkafka's ssl.certificate.location and ssl.key.location.
	SSLCertificateLocation string
	SSLKeyLocation         string
	// ssl.endpoint.identification.algorithm: nil is "https", a pointer
	// to "" skips the host name check.
	SSLEndpointIdentificationAlgorithm *string

	SASLMechanism  string // sasl.mechanism
	SASLJAASConfig string // sasl.jaas.config, secret
	SASLUsername   string // librdkafka's sasl.username
	SASLPassword   string // librdkafka's sasl.password, secret
	// TokenProvider supplies the OAUTHBEARER tokens; no property.
	TokenProvider TokenProvider
	// TLS is the base TLS configuration; no property.
	TLS *tls.Config

	// zookeeper.auth (secret; ZooKeeperAuthEnv when empty) and
	// zookeeper.set.acl.
	ZooKeeperAuth   string
	ZooKeeperSetACL bool
	// zookeeper.ssl.client.enable and zookeeper.ssl.truststore.* and
	// zookeeper.ssl.keystore.* (passwords secret).
	ZooKeeperSSLClientEnable       bool
	ZooKeeperSSLTruststoreLocation string
	ZooKeeperSSLTruststoreType     string
	ZooKeeperSSLTruststorePassword string
	ZooKeeperSSLKeystoreLocation   string
	ZooKeeperSSLKeystoreType       string
	ZooKeeperSSLKeystorePassword   string
	// zookeeper.ssl.endpoint.identification.enable: nil is true.
	ZooKeeperSSLEndpointIdentificationEnable *bool
}

// String lists the fields that are set, in the order of their
// declaration, secrets as Hidden.
func (s Settings) String() string {
	var l fieldList
	l.str("SecurityProtocol", s.SecurityProtocol)
	l.str("ListenerName", s.ListenerName)
	l.str("SSLTruststoreLocation", s.SSLTruststoreLocation)
	l.str("SSLTruststoreType", s.SSLTruststoreType)
	l.secret("SSLTruststorePassword", s.SSLTruststorePassword)
	l.str("SSLTruststoreCertificates", s.SSLTruststoreCertificates)
	l.str("SSLKeystoreLocation", s.SSLKeystoreLocation)
	l.str("SSLKeystoreType", s.SSLKeystoreType)
	l.secret("SSLKeystorePassword", s.SSLKeystorePassword)
	l.secret("SSLKeyPassword", s.SSLKeyPassword)
	l.str("SSLKeystoreCertificateChain", s.SSLKeystoreCertificateChain)
	l.secret("SSLKeystoreKey", s.SSLKeystoreKey)
	l.str("SSLCertificateLocation", s.SSLCertificateLocation)
	l.str("SSLKeyLocation", s.SSLKeyLocation)
	if a := s.SSLEndpointIdentificationAlgorithm; a != nil {
		l.add("SSLEndpointIdentificationAlgorithm", strconv.Quote(*a))
	}
	l.str("SASLMechanism", s.SASLMechanism)
	l.secret("SASLJAASConfig", s.SASLJAASConfig)
	l.str("SASLUsername", s.SASLUsername)
	l.secret("SASLPassword", s.SASLPassword)
	if s.TokenProvider != nil {
		l.add("TokenProvider", "set")
	}
	if s.TLS != nil {
		l.add("TLS", "set")
	}
	l.secret("ZooKeeperAuth", s.ZooKeeperAuth)
	l.flag("ZooKeeperSetACL", s.ZooKeeperSetACL)
	l.flag("ZooKeeperSSLClientEnable", s.ZooKeeperSSLClientEnable)
	l.str("ZooKeeperSSLTruststoreLocation", s.ZooKeeperSSLTruststoreLocation)
	l.str("ZooKeeperSSLTruststoreType", s.ZooKeeperSSLTruststoreType)
	l.secret("ZooKeeperSSLTruststorePassword", s.ZooKeeperSSLTruststorePassword)
	l.str("ZooKeeperSSLKeystoreLocation", s.ZooKeeperSSLKeystoreLocation)
	l.str("ZooKeeperSSLKeystoreType", s.ZooKeeperSSLKeystoreType)
	l.secret("ZooKeeperSSLKeystorePassword", s.ZooKeeperSSLKeystorePassword)
	if e := s.ZooKeeperSSLEndpointIdentificationEnable; e != nil {
		l.add("ZooKeeperSSLEndpointIdentificationEnable", strconv.FormatBool(*e))
	}
	return "{" + strings.Join(l, " ") + "}"
}

// fieldList collects the "Name:value" items of String.
type fieldList []string

func (l *fieldList) add(name, value string) { *l = append(*l, name+":"+value) }

// str adds a string field that is set, quoted.
func (l *fieldList) str(name, v string) {
	if v != "" {
		l.add(name, strconv.Quote(v))
	}
}

// secret adds a secret string field that is set, as Hidden.
func (l *fieldList) secret(name, v string) {
	if v != "" {
		l.add(name, Hidden)
	}
}

// flag adds a bool field that is set (true).
func (l *fieldList) flag(name string, v bool) {
	if v {
		l.add(name, "true")
	}
}

// GoString is String, so that %#v hides secrets too.
func (s Settings) GoString() string { return "secure.Settings" + s.String() }

// Protocol returns SecurityProtocol in upper case, PLAINTEXT when empty.
func (s Settings) Protocol() string {
	if s.SecurityProtocol == "" {
		return ProtocolPlaintext
	}
	return strings.ToUpper(s.SecurityProtocol)
}

// usesTLS reports whether the protocol encrypts.
func (s Settings) usesTLS() bool {
	p := s.Protocol()
	return p == ProtocolSSL || p == ProtocolSASLSSL
}

// usesSASL reports whether the protocol authenticates with SASL.
func (s Settings) usesSASL() bool {
	p := s.Protocol()
	return p == ProtocolSASLPlaintext || p == ProtocolSASLSSL
}

// mechanism returns SASLMechanism in upper case, GSSAPI when empty.
func (s Settings) mechanism() string {
	if s.SASLMechanism == "" {
		return MechanismGSSAPI
	}
	return strings.ToUpper(s.SASLMechanism)
}

// zooKeeperAuth returns ZooKeeperAuth, or the environment's.
func (s Settings) zooKeeperAuth() string {
	if s.ZooKeeperAuth != "" {
		return s.ZooKeeperAuth
	}
	return os.Getenv(ZooKeeperAuthEnv)
}
