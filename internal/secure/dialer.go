package secure

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/net/proxy"
)

// readKeyPair reads librdkafka's ssl.certificate.location and
// ssl.key.location.
func readKeyPair(certPath, keyPath, password string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return tls.Certificate{}, &KeyError{Key: "ssl.certificate.location", Value: certPath, Reason: "cannot read the file: " + errorReason(err)}
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return tls.Certificate{}, &KeyError{Key: "ssl.key.location", Value: keyPath, Reason: "cannot read the file: " + errorReason(err)}
	}
	cert, err := pemKeyPair(certPEM, keyPEM, password)
	if err != nil {
		return tls.Certificate{}, &KeyError{Key: "ssl.key.location", Value: keyPath, Reason: err.Error()}
	}
	return cert, nil
}

// HandshakeError is a failed TLS handshake with a broker or ZooKeeper
// server. Its message says which setting is the likely culprit.
type HandshakeError struct {
	// Addr is the server's host:port.
	Addr string
	// Hint names the setting to check.
	Hint string
	// Err is crypto/tls's error.
	Err error

	auth bool // matches ErrAuthentication
}

// Error returns "TLS handshake with <addr> failed: <cause> (<hint>)".
func (e *HandshakeError) Error() string {
	return fmt.Sprintf("TLS handshake with %s failed: %v (%s)", e.Addr, e.Err, e.Hint)
}

// Unwrap returns the cause.
func (e *HandshakeError) Unwrap() error { return e.Err }

// Is reports whether target is ErrAuthentication and the handshake failed
// on a certificate or on a server that does not speak TLS, rather than on
// the connection (a timeout, a reset).
func (e *HandshakeError) Is(target error) bool { return target == ErrAuthentication && e.auth }

// tlsDialer dials through inner (or direct) and completes a TLS handshake
// before returning, bounded by the context and timeout.
type tlsDialer struct {
	conf    *tls.Config
	timeout time.Duration
	inner   proxy.Dialer
	direct  net.Dialer
	// keys names the trust settings, for errors.
	keys string
	// client explains errors.
	client *Client
}

// Explain is Client.Explain.
func (d *tlsDialer) Explain(err error) error { return d.client.Explain(err) }

// Dial connects and shakes hands.
func (d *tlsDialer) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, addr)
}

// DialContext connects and shakes hands; ctx can interrupt both.
func (d *tlsDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if d.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.timeout)
		defer cancel()
	}
	var (
		raw net.Conn
		err error
	)
	switch p := d.inner.(type) {
	case nil:
		raw, err = d.direct.DialContext(ctx, network, addr)
	case proxy.ContextDialer:
		raw, err = p.DialContext(ctx, network, addr)
	default:
		raw, err = p.Dial(network, addr)
	}
	if err != nil {
		return nil, err
	}
	if d.conf == nil {
		return raw, nil
	}
	conf := d.conf
	if conf.ServerName == "" {
		conf = conf.Clone()
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		conf.ServerName = host
	}
	c := tls.Client(raw, conf)
	if err := c.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, d.explain(addr, err)
	}
	return c, nil
}

// explain wraps a handshake error with the setting to check.
func (d *tlsDialer) explain(addr string, err error) error {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
		alert    tls.AlertError
		record   tls.RecordHeaderError
	)
	hint := "is this a TLS listener? check security.protocol and the broker's listeners"
	auth := true
	switch {
	case errors.As(err, &unknown):
		hint = "the server's certificate is not signed by an authority in " + d.keys
	case errors.As(err, &hostname):
		hint = "the server's certificate does not name the host connected to; fix the advertised listener or the certificate, or set ssl.endpoint.identification.algorithm= (empty) to skip the host name check"
	case errors.As(err, &invalid):
		hint = "the server's certificate is not valid (expired or not for servers); check the server's key store"
	case errors.As(err, &verify):
		hint = "the server's certificate does not verify; check " + d.keys
	case errors.As(err, &alert):
		hint = "the server refused the handshake; if it requires client certificates, set ssl.keystore.location (or ssl.certificate.location and ssl.key.location)"
	case errors.As(err, &record):
		// The server answered with something other than TLS.
	case errors.Is(err, context.DeadlineExceeded):
		hint = "no answer within the connection timeout; is this a TLS listener? check security.protocol"
		auth = false
	default:
		// The connection failed during the handshake: a server that
		// closed it may not speak TLS, or may be restarting.
		auth = false
	}
	return &HandshakeError{Addr: addr, Hint: hint, Err: err, auth: auth}
}
