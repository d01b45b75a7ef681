package testcluster

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// certAuthority is a CA made at test time.
type certAuthority struct {
	cert *x509.Certificate
	key  *rsa.PrivateKey
}

// newCA makes a self-signed certificate authority.
func newCA(name string) (*certAuthority, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"zkconsumer tests"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &certAuthority{cert: cert, key: key}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// issue signs a leaf certificate for a server (hosts: DNS names or IPs) or
// a client (no hosts).
func (ca *certAuthority) issue(cn string, hosts []string, server bool) (*x509.Certificate, *rsa.PrivateKey, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"zkconsumer tests"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

func certPEM(certs ...*x509.Certificate) []byte {
	var out []byte
	for _, c := range certs {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return out
}

func keyPEM(key *rsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// writeFiles writes name -> contents under dir, private to the user.
func writeFiles(dir string, files map[string][]byte) error {
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// makeCertificates writes the certificates of a secure cluster into s.Dir
// and fills in s's file names.
func (s *Security) makeCertificates() error {
	ca, err := newCA("zkconsumer test CA")
	if err != nil {
		return err
	}
	other, err := newCA("zkconsumer untrusted CA")
	if err != nil {
		return err
	}
	serverCert, serverKey, err := ca.issue("localhost", []string{"localhost", "127.0.0.1"}, true)
	if err != nil {
		return err
	}
	clientCert, clientKey, err := ca.issue(s.User, nil, false)
	if err != nil {
		return err
	}
	serverP12, err := pkcs12.Modern2023.Encode(serverKey, serverCert, []*x509.Certificate{ca.cert}, s.StorePassword)
	if err != nil {
		return fmt.Errorf("testcluster: server key store: %w", err)
	}
	clientP12, err := pkcs12.Modern2023.Encode(clientKey, clientCert, []*x509.Certificate{ca.cert}, s.StorePassword)
	if err != nil {
		return fmt.Errorf("testcluster: client key store: %w", err)
	}
	trustP12, err := pkcs12.Modern2023.EncodeTrustStore([]*x509.Certificate{ca.cert}, s.StorePassword)
	if err != nil {
		return fmt.Errorf("testcluster: trust store: %w", err)
	}
	clientKeyPEM, err := keyPEM(clientKey)
	if err != nil {
		return err
	}
	serverKeyPEM, err := keyPEM(serverKey)
	if err != nil {
		return err
	}
	p := func(name string) string { return filepath.Join(s.Dir, name) }
	s.CAFile, s.TruststoreP12 = p("ca.pem"), p("truststore.p12")
	s.UntrustedCAFile = p("untrusted-ca.pem")
	s.ServerKeystoreP12 = p("server.p12")
	s.ServerCertFile, s.ServerKeyFile = p("server.pem"), p("server.key")
	s.ClientCertFile, s.ClientKeyFile = p("client.pem"), p("client.key")
	s.ClientKeystorePEM, s.ClientKeystoreP12 = p("client-keystore.pem"), p("client.p12")
	return writeFiles(s.Dir, map[string][]byte{
		"ca.pem":              certPEM(ca.cert),
		"untrusted-ca.pem":    certPEM(other.cert),
		"truststore.p12":      trustP12,
		"server.p12":          serverP12,
		"server.pem":          certPEM(serverCert, ca.cert),
		"server.key":          serverKeyPEM,
		"client.pem":          certPEM(clientCert, ca.cert),
		"client.key":          clientKeyPEM,
		"client-keystore.pem": append(certPEM(clientCert, ca.cert), clientKeyPEM...),
		"client.p12":          clientP12,
	})
}
