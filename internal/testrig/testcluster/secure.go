package testcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// Listener names of a secure cluster (Options.Secure). Each broker has all
// of them besides PLAINTEXT, which the brokers use between themselves and
// the harness's own helpers (CreateTopic, Produce) use.
const (
	// ListenerSSL is TLS without client certificates.
	ListenerSSL = "SSL"
	// ListenerMTLS is TLS that requires a client certificate signed by the
	// test CA (ssl.client.auth=required); its protocol is SSL.
	ListenerMTLS = "MTLS"
	// ListenerSASLSSL is SASL over TLS with PLAIN, SCRAM-SHA-256,
	// SCRAM-SHA-512 and OAUTHBEARER (Kafka's unsecured validator: any
	// unsigned JWT with "sub" and "exp") enabled.
	ListenerSASLSSL = "SASL_SSL"
	// ListenerSASLPlaintext is SASL without TLS with only PLAIN enabled.
	ListenerSASLPlaintext = "SASL_PLAINTEXT"
	// ListenerWrongHost is TLS on 127.0.0.2, a host name the broker's
	// certificate does not name; its protocol is SSL. It comes after SSL
	// in the registration, so security.protocol=SSL alone picks SSL.
	ListenerWrongHost = "WRONGHOST"
)

// secureListeners are the extra listeners, in registration order, with
// their protocols and hosts.
var secureListeners = []struct{ name, protocol, host string }{
	{ListenerSSL, "SSL", "127.0.0.1"},
	{ListenerMTLS, "SSL", "127.0.0.1"},
	{ListenerSASLSSL, "SASL_SSL", "127.0.0.1"},
	{ListenerSASLPlaintext, "SASL_PLAINTEXT", "127.0.0.1"},
	{ListenerWrongHost, "SSL", "127.0.0.2"},
}

// Security describes the TLS and SASL set-up of a secure cluster: the
// files the test wrote and the credentials the brokers accept.
type Security struct {
	// Dir holds the files.
	Dir string
	// CAFile is the PEM certificate of the CA that signed the brokers' and
	// the client's certificates; TruststoreP12 holds it as a PKCS12 trust
	// store (password StorePassword).
	CAFile, TruststoreP12 string
	// UntrustedCAFile is a CA that signed nothing the cluster uses.
	UntrustedCAFile string
	// ServerKeystoreP12 is the brokers' key store; ServerCertFile and
	// ServerKeyFile the same certificate and key in PEM. The certificate
	// names localhost and 127.0.0.1.
	ServerKeystoreP12, ServerCertFile, ServerKeyFile string
	// ClientCertFile and ClientKeyFile are a client certificate (chain) and
	// its unencrypted key in PEM; ClientKeystorePEM has both in one file;
	// ClientKeystoreP12 is the same as a PKCS12 key store.
	ClientCertFile, ClientKeyFile, ClientKeystorePEM, ClientKeystoreP12 string
	// StorePassword protects the PKCS12 stores.
	StorePassword string
	// User and Password are accepted by PLAIN and by both SCRAM
	// mechanisms.
	User, Password string

	ports     map[string][]int // listener -> port by broker id
	zkTLSPort int
}

// Listener returns the host:port of listener on broker id.
func (s *Security) Listener(name string, id int) string {
	for _, l := range secureListeners {
		if l.name == name {
			return net.JoinHostPort(l.host, strconv.Itoa(s.ports[name][id]))
		}
	}
	return ""
}

// Security returns the TLS and SASL set-up of a cluster started with
// Options.Secure, nil for others.
func (c *Cluster) Security() *Security { return c.security }

// prepareSecurity makes the certificates and picks the ports of the
// secure listeners, before ZooKeeper starts.
func (c *Cluster) prepareSecurity() error {
	s := &Security{
		Dir:           filepath.Join(c.dir, "security"),
		StorePassword: "store-secret",
		User:          "alice",
		Password:      "alice-secret",
		ports:         map[string][]int{},
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	if err := s.makeCertificates(); err != nil {
		return err
	}
	ports, err := freePorts(1 + len(secureListeners)*c.opts.Brokers)
	if err != nil {
		return err
	}
	s.zkTLSPort, ports = ports[0], ports[1:]
	for i, l := range secureListeners {
		s.ports[l.name] = ports[i*c.opts.Brokers : (i+1)*c.opts.Brokers]
	}
	c.security = s
	return nil
}

// createSCRAMUser creates the SCRAM credentials of the test user through
// ZooKeeper, with Kafka 3.9's ConfigCommand, before the brokers start.
func (c *Cluster) createSCRAMUser(ctx context.Context) error {
	s := c.security
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// ConfigCommand needs the chroot, which the brokers have not made yet.
	if c.chroot != "" {
		conn, err := c.dialZK(ctx)
		if err != nil {
			return err
		}
		_, err = conn.Create(c.chroot, nil, 0, zk.WorldACL(zk.PermAll))
		conn.Close()
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("testcluster: create chroot %s: %w", c.chroot, err)
		}
	}
	cmd, err := Tool(ctx, "kafka.admin.ConfigCommand",
		"--zookeeper", c.ZKConnect(), "--alter",
		"--add-config", fmt.Sprintf("SCRAM-SHA-256=[password=%s],SCRAM-SHA-512=[password=%s]", s.Password, s.Password),
		"--entity-type", "users", "--entity-name", s.User)
	if err != nil {
		return err
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("testcluster: create SCRAM user %s: %w\n%s", s.User, err, out)
	}
	return nil
}

// scramFormatArgs are the arguments of Kafka 4's storage tool (format)
// that create the SCRAM credentials of the test user in a KRaft cluster's
// bootstrap metadata, with Kafka's default iteration count (4096).
func (s *Security) scramFormatArgs() []string {
	var args []string
	for _, m := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
		args = append(args, "--add-scram", fmt.Sprintf("%s=[name=%s,password=%s]", m, s.User, s.Password))
	}
	return args
}

// addZooKeeperTLS gives ZooKeeper a TLS client port besides its plain
// one (which the brokers and the harness use), with the brokers'
// certificate; client certificates are not required.
func (s *Security) addZooKeeperTLS(props map[string]string) {
	props["secureClientPort"] = strconv.Itoa(s.zkTLSPort)
	props["secureClientPortAddress"] = "127.0.0.1"
	props["serverCnxnFactory"] = "org.apache.zookeeper.server.NettyServerCnxnFactory"
	props["ssl.keyStore.location"] = s.ServerKeystoreP12
	props["ssl.keyStore.password"] = s.StorePassword
	props["ssl.keyStore.type"] = "PKCS12"
	props["ssl.trustStore.location"] = s.CAFile
	props["ssl.trustStore.type"] = "PEM"
	props["ssl.clientAuth"] = "want"
}

// ZooKeeperTLS is the host:port of ZooKeeper's TLS client port.
func (s *Security) ZooKeeperTLS() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.zkTLSPort))
}

// addSecureListeners adds the listeners and TLS/SASL settings of broker id
// to its server.properties, after the listeners already there (PLAINTEXT,
// and a KRaft node's controller listener, which is not advertised).
func (s *Security) addSecureListeners(id int, props map[string]string) {
	listeners := []string{props["listeners"]}
	advertised := []string{props["advertised.listeners"]}
	protocols := []string{"PLAINTEXT:PLAINTEXT"}
	if m := props["listener.security.protocol.map"]; m != "" {
		protocols = []string{m}
	}
	for _, l := range secureListeners {
		listeners = append(listeners, l.name+"://"+s.Listener(l.name, id))
		advertised = append(advertised, l.name+"://"+s.Listener(l.name, id))
		protocols = append(protocols, l.name+":"+l.protocol)
	}
	props["listeners"] = strings.Join(listeners, ",")
	props["advertised.listeners"] = strings.Join(advertised, ",")
	props["listener.security.protocol.map"] = strings.Join(protocols, ",")
	props["inter.broker.listener.name"] = "PLAINTEXT"
	props["ssl.keystore.type"] = "PKCS12"
	props["ssl.keystore.location"] = s.ServerKeystoreP12
	props["ssl.keystore.password"] = s.StorePassword
	props["ssl.key.password"] = s.StorePassword
	props["ssl.truststore.type"] = "PEM"
	props["ssl.truststore.location"] = s.CAFile
	props["ssl.client.auth"] = "none"
	props["listener.name.mtls.ssl.client.auth"] = "required"
	props["sasl.enabled.mechanisms"] = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER"
	props["listener.name.sasl_plaintext.sasl.enabled.mechanisms"] = "PLAIN"
	plain := fmt.Sprintf(`org.apache.kafka.common.security.plain.PlainLoginModule required user_%s="%s";`, s.User, s.Password)
	scram := "org.apache.kafka.common.security.scram.ScramLoginModule required;"
	props["listener.name.sasl_ssl.plain.sasl.jaas.config"] = plain
	props["listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config"] = scram
	props["listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config"] = scram
	props["listener.name.sasl_plaintext.plain.sasl.jaas.config"] = plain
	// Kafka's unsecured OAUTHBEARER validator: unsigned JWTs with "sub"
	// and "exp" claims.
	props["listener.name.sasl_ssl.oauthbearer.sasl.jaas.config"] = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
}

var sharedSecure, sharedSecureKRaft sharedCluster

// SharedSecure returns a one-broker secure cluster (Options.Secure) this
// test binary starts once and Main stops. Like Shared, it fails the test
// when no cluster can be had; only -short skips.
func SharedSecure(t testing.TB) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: skipped by -short")
	}
	sharedSecure.mu.Lock()
	defer sharedSecure.mu.Unlock()
	if sharedSecure.cluster == nil && sharedSecure.err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		c, err := Start(ctx, Options{Secure: true, Logf: t.Logf})
		cancel()
		sharedSecure.private = err == nil
		sharedSecure.cluster, sharedSecure.err = c, err
	}
	if sharedSecure.err != nil {
		t.Fatalf("integration test needs a real secure ZooKeeper and Kafka: %v", sharedSecure.err)
	}
	return sharedSecure.cluster
}

// SharedSecureKRaft is SharedSecure for a one-node Kafka 4.x KRaft cluster
// (Options{KRaft: true, Secure: true}): the same listeners and
// credentials, the SCRAM user created when the storage is formatted.
func SharedSecureKRaft(t testing.TB) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: skipped by -short")
	}
	sharedSecureKRaft.mu.Lock()
	defer sharedSecureKRaft.mu.Unlock()
	if sharedSecureKRaft.cluster == nil && sharedSecureKRaft.err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		c, err := Start(ctx, Options{KRaft: true, Secure: true, Logf: t.Logf})
		cancel()
		sharedSecureKRaft.private = err == nil
		sharedSecureKRaft.cluster, sharedSecureKRaft.err = c, err
	}
	if sharedSecureKRaft.err != nil {
		t.Fatalf("integration test needs a real secure Kafka 4 KRaft cluster: %v", sharedSecureKRaft.err)
	}
	return sharedSecureKRaft.cluster
}
