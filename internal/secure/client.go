package secure

import (
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
)

// Validate checks the settings without reading any file and returns one
// *KeyError per problem, joined with errors.Join.
func (s Settings) Validate() error {
	var errs []error
	bad := func(key, value, reason string) {
		errs = append(errs, &KeyError{Key: key, Value: value, Reason: reason})
	}
	switch s.Protocol() {
	case ProtocolPlaintext, ProtocolSSL, ProtocolSASLPlaintext, ProtocolSASLSSL:
	default:
		bad("security.protocol", s.SecurityProtocol, "must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL")
	}
	for _, st := range []struct{ key, typ string }{
		{"ssl.truststore.type", s.SSLTruststoreType},
		{"ssl.keystore.type", s.SSLKeystoreType},
		{"zookeeper.ssl.truststore.type", s.ZooKeeperSSLTruststoreType},
		{"zookeeper.ssl.keystore.type", s.ZooKeeperSSLKeystoreType},
	} {
		if reason := checkStoreType(st.typ); reason != "" {
			bad(st.key, st.typ, reason)
		}
	}
	if s.SSLTruststoreLocation != "" && s.SSLTruststoreCertificates != "" {
		bad("ssl.truststore.certificates", Hidden, "cannot be set together with ssl.truststore.location")
	}
	sources := 0
	if s.SSLKeystoreLocation != "" {
		sources++
	}
	if s.SSLKeystoreCertificateChain != "" || s.SSLKeystoreKey != "" {
		sources++
		if s.SSLKeystoreCertificateChain == "" || s.SSLKeystoreKey == "" {
			bad("ssl.keystore.certificate.chain", "", "must be set together with ssl.keystore.key")
		}
	}
	if s.SSLCertificateLocation != "" || s.SSLKeyLocation != "" {
		sources++
		if s.SSLCertificateLocation == "" || s.SSLKeyLocation == "" {
			bad("ssl.certificate.location", s.SSLCertificateLocation, "must be set together with ssl.key.location")
		}
	}
	if sources > 1 {
		bad("ssl.keystore.location", s.SSLKeystoreLocation,
			"give the client certificate one way only: ssl.keystore.location, ssl.keystore.certificate.chain with ssl.keystore.key, or ssl.certificate.location with ssl.key.location")
	}
	if a := s.SSLEndpointIdentificationAlgorithm; a != nil && *a != "" && !strings.EqualFold(*a, EndpointIdentificationHTTPS) {
		bad("ssl.endpoint.identification.algorithm", *a, `must be "https" or empty (no host name check)`)
	}
	if s.usesSASL() {
		switch m := s.mechanism(); m {
		case MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512:
			if _, _, err := s.credentials(); err != nil {
				errs = append(errs, err)
			}
		case MechanismOAuthBearer:
			if s.TokenProvider == nil {
				bad("sasl.mechanism", m, "OAUTHBEARER needs a token provider, set in code (connector.SecurityConfig.TokenProvider)")
			}
		case MechanismGSSAPI:
			bad("sasl.mechanism", s.SASLMechanism, "GSSAPI (Kerberos, Kafka's default) is not supported; set sasl.mechanism to PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER")
		default:
			bad("sasl.mechanism", s.SASLMechanism, "must be one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER")
		}
	}
	errs = append(errs, s.validateZooKeeper()...)
	return errors.Join(errs...)
}

// Client is a validated set of settings with its stores loaded: what every
// broker connection applies.
type Client struct {
	s        Settings
	tls      *tls.Config // nil without TLS
	user     string
	password string
}

// New validates s, reads its trust and key stores and returns the Client
// that broker connections use. Every problem is a *KeyError naming the
// property to fix.
func New(s Settings) (*Client, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	c := &Client{s: s}
	if s.usesTLS() {
		t, err := s.brokerTLS()
		if err != nil {
			return nil, err
		}
		c.tls = t
	}
	if s.usesSASL() && s.mechanism() != MechanismOAuthBearer {
		c.user, c.password, _ = s.credentials()
	}
	return c, nil
}

// Settings returns the settings the Client was made from.
func (c *Client) Settings() Settings { return c.s }

// Protocol is the security protocol, in upper case.
func (c *Client) Protocol() string { return c.s.Protocol() }

// TLSConfig returns a clone of the TLS configuration of broker connections,
// nil for PLAINTEXT and SASL_PLAINTEXT.
func (c *Client) TLSConfig() *tls.Config {
	if c.tls == nil {
		return nil
	}
	return c.tls.Clone()
}

// Apply sets the TLS and SASL settings of sc, a configuration of broker
// connections. Unless the protocol is PLAINTEXT, it installs a dialer as
// sc.Net.Proxy.Dialer on top of the one already there (or a plain
// net.Dialer with sc's timeouts); for TLS it completes the handshake within
// the dial timeout and reports failures with the property to fix. The
// dialer has a method Explain(error) error (Client.Explain), which callers
// that only hold sc can use on the errors of Broker.Open. With SASL it
// raises sc.Version to at least 1.0.0, which SASL handshake v1 needs.
// Apply does not touch the other settings of sc.
func (c *Client) Apply(sc *sarama.Config) {
	if c.s.Protocol() != ProtocolPlaintext {
		d := &tlsDialer{conf: c.tls, timeout: sc.Net.DialTimeout, keys: c.s.trustKeys(), client: c}
		if sc.Net.Proxy.Enable && sc.Net.Proxy.Dialer != nil {
			d.inner = sc.Net.Proxy.Dialer
		}
		d.direct.Timeout = sc.Net.DialTimeout
		d.direct.KeepAlive = sc.Net.KeepAlive
		d.direct.LocalAddr = sc.Net.LocalAddr
		sc.Net.Proxy.Enable = true
		sc.Net.Proxy.Dialer = d
		sc.Net.TLS.Enable = false
	}
	if !c.s.usesSASL() {
		return
	}
	sc.Net.SASL.Enable = true
	sc.Net.SASL.Handshake = true
	// SASL handshake v1 (SaslAuthenticate) is Kafka 1.0's; sarama picks
	// its request versions from sc.Version.
	sc.Net.SASL.Version = sarama.SASLHandshakeV1
	if !sc.Version.IsAtLeast(sarama.V1_0_0_0) {
		sc.Version = sarama.V1_0_0_0
	}
	switch c.s.mechanism() {
	case MechanismPlain:
		sc.Net.SASL.Mechanism = sarama.SASLTypePlaintext
	case MechanismSCRAMSHA256:
		sc.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
		sc.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &scramClient{hash: sha256.New} }
	case MechanismSCRAMSHA512:
		sc.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
		sc.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &scramClient{hash: sha512.New} }
	case MechanismOAuthBearer:
		sc.Net.SASL.Mechanism = sarama.SASLTypeOAuth
		sc.Net.SASL.TokenProvider = saramaTokens{c.s.TokenProvider}
	}
	sc.Net.SASL.User = c.user
	sc.Net.SASL.Password = c.password
}

// trustKeys names the properties that decide which brokers are trusted,
// for handshake errors.
func (s Settings) trustKeys() string {
	switch {
	case s.SSLTruststoreLocation != "":
		return "ssl.truststore.location"
	case s.SSLTruststoreCertificates != "":
		return "ssl.truststore.certificates"
	}
	return "ssl.truststore.location (unset: the system's authorities are trusted)"
}

// brokerTLS builds the TLS configuration of broker connections.
func (s Settings) brokerTLS() (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.TLS != nil {
		t = s.TLS.Clone()
	}
	var errs []error
	switch {
	case s.SSLTruststoreLocation != "":
		certs, err := loadTrustStore(s.SSLTruststoreLocation, s.SSLTruststoreType, s.SSLTruststorePassword, truststoreKeys)
		if err != nil {
			errs = append(errs, err)
		} else {
			t.RootCAs = poolOf(certs)
		}
	case s.SSLTruststoreCertificates != "":
		certs, err := parsePEMCertificates([]byte(s.SSLTruststoreCertificates))
		if err == nil && len(certs) == 0 {
			err = errors.New("holds no PEM certificate")
		}
		if err != nil {
			errs = append(errs, &KeyError{Key: "ssl.truststore.certificates", Value: Hidden, Reason: err.Error()})
		} else {
			t.RootCAs = poolOf(certs)
		}
	}
	switch {
	case s.SSLKeystoreLocation != "":
		cert, err := loadKeyStore(s.SSLKeystoreLocation, s.SSLKeystoreType, s.SSLKeystorePassword, s.SSLKeyPassword, keystoreKeys)
		if err != nil {
			errs = append(errs, err)
		} else {
			t.Certificates = []tls.Certificate{cert}
		}
	case s.SSLKeystoreCertificateChain != "":
		cert, err := pemKeyPair([]byte(s.SSLKeystoreCertificateChain), []byte(s.SSLKeystoreKey), s.SSLKeyPassword)
		if err != nil {
			errs = append(errs, &KeyError{Key: "ssl.keystore.key", Value: Hidden, Reason: err.Error()})
		} else {
			t.Certificates = []tls.Certificate{cert}
		}
	case s.SSLCertificateLocation != "":
		cert, err := readKeyPair(s.SSLCertificateLocation, s.SSLKeyLocation, s.SSLKeyPassword)
		if err != nil {
			errs = append(errs, err)
		} else {
			t.Certificates = []tls.Certificate{cert}
		}
	}
	if a := s.SSLEndpointIdentificationAlgorithm; a != nil && *a == "" {
		skipHostCheck(t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

func poolOf(certs []*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

// skipHostCheck keeps the chain verification of t but drops the host name
// check, as an empty ssl.endpoint.identification.algorithm does in Kafka.
func skipHostCheck(t *tls.Config) {
	roots := t.RootCAs
	t.InsecureSkipVerify = true
	t.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("the server sent no certificate")
		}
		opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(opts)
		return err
	}
}

// Endpoint picks the listener of broker b to connect to: the one named by
// zkconsumer.listener.name, or the first whose protocol is
// security.protocol. A nil Client picks PLAINTEXT.
func (c *Client) Endpoint(b zkbrokers.Broker) (zkbrokers.Endpoint, error) {
	if c == nil {
		return b.EndpointFor(ProtocolPlaintext, "")
	}
	return b.EndpointFor(c.Protocol(), c.s.ListenerName)
}
