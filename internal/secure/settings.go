package secure

import (
	"crypto/tls"
	"fmt"
	"os"
	"reflect"
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
// authentication, Kafka's default. Every field names its property; the
// values are those of Kafka's Java clients unless a field says otherwise.
//
// Fields holding secrets are marked "secret": String, GoString and %v
// print them as Hidden, and no error of this package contains them.
type Settings struct {
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
	// ssl.endpoint.identification.algorithm, default "https": the broker's
	// certificate must be valid for the host name or IP address connected
	// to. A pointer to "" skips that check (the certificate must still be
	// signed by a trusted authority). Nil means the default.
	SSLEndpointIdentificationAlgorithm *string

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
	// ZooKeeperAuthEnv; empty there too means no credentials.
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
	// zookeeper.ssl.endpoint.identification.enable, default true (nil):
	// ZooKeeper's certificate must name the host connected to.
	ZooKeeperSSLEndpointIdentificationEnable *bool
}

// secretFields are the fields String hides.
var secretFields = map[string]bool{
	"SSLTruststorePassword":          true,
	"SSLKeystorePassword":            true,
	"SSLKeyPassword":                 true,
	"SSLKeystoreKey":                 true,
	"SASLJAASConfig":                 true,
	"SASLPassword":                   true,
	"ZooKeeperAuth":                  true,
	"ZooKeeperSSLTruststorePassword": true,
	"ZooKeeperSSLKeystorePassword":   true,
}

// String lists the fields that are set, secrets as Hidden.
func (s Settings) String() string {
	var b strings.Builder
	b.WriteString("{")
	v := reflect.ValueOf(s)
	t := v.Type()
	first := true
	for i := range t.NumField() {
		f := v.Field(i)
		if f.IsZero() {
			continue
		}
		if !first {
			b.WriteString(" ")
		}
		first = false
		name := t.Field(i).Name
		switch {
		case secretFields[name]:
			fmt.Fprintf(&b, "%s:%s", name, Hidden)
		case f.Kind() == reflect.Pointer && f.Elem().Kind() == reflect.String:
			fmt.Fprintf(&b, "%s:%q", name, f.Elem().String())
		case f.Kind() == reflect.Pointer && f.Elem().Kind() == reflect.Bool:
			fmt.Fprintf(&b, "%s:%t", name, f.Elem().Bool())
		case f.Kind() == reflect.String:
			fmt.Fprintf(&b, "%s:%q", name, f.String())
		case f.Kind() == reflect.Bool:
			fmt.Fprintf(&b, "%s:%t", name, f.Bool())
		default:
			fmt.Fprintf(&b, "%s:set", name)
		}
	}
	b.WriteString("}")
	return b.String()
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
