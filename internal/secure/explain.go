package secure

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/kip848"
)

// ErrAuthentication is matched (errors.Is) by the errors of connections
// that a broker or ZooKeeper server refused to authenticate, or whose TLS
// handshake failed on the certificates or the protocol spoken: a SASL
// authentication that failed, a SASL mechanism the listener does not
// enable, a server certificate that does not verify (an unknown
// authority, another host name, expired), a client certificate the server
// refused or wanted, a server that answers the handshake with something
// other than TLS. Connecting again cannot mend these; only a change of the
// setting the error names can. Failures that may pass (a refused or lost
// connection, a timeout, a connection closed during the handshake, which
// is how a Kafka listener that does not speak TLS answers) do not match
// it: they are retried, with their hint.
var ErrAuthentication = errors.New("authentication failed")

// ConnectError is a failed connection to a broker with a hint at the
// setting to fix. It never contains a secret.
type ConnectError struct {
	// Hint names the setting to check.
	Hint string
	// Err is the cause.
	Err error

	auth bool // matches ErrAuthentication
}

// Error returns "<cause> (<hint>)".
func (e *ConnectError) Error() string { return fmt.Sprintf("%v (%s)", e.Err, e.Hint) }

// Unwrap returns the cause.
func (e *ConnectError) Unwrap() error { return e.Err }

// Is reports whether target is ErrAuthentication and the broker refused
// the credentials or the certificate.
func (e *ConnectError) Is(target error) bool { return target == ErrAuthentication && e.auth }

// Explain adds to err, an error of opening a broker connection configured
// by the Client, the setting the user should check, when it can tell. Other
// errors, and errors already explained, are returned as they are. A nil
// Client returns err.
func (c *Client) Explain(err error) error {
	if c == nil || err == nil {
		return err
	}
	var (
		ce *ConnectError
		he *HandshakeError
	)
	if errors.As(err, &ce) || errors.As(err, &he) {
		return err
	}
	var alert tls.AlertError
	switch {
	case errors.Is(err, sarama.ErrSASLAuthenticationFailed) || errors.Is(err, kip848.ErrSASLAuthenticationFailed):
		keys := "sasl.jaas.config"
		if c.s.SASLUsername != "" {
			keys = "sasl.username and sasl.password"
		}
		return &ConnectError{Err: err, auth: true, Hint: fmt.Sprintf("the broker refused user %q with %s; check %s", c.user, c.s.mechanism(), keys)}
	case errors.Is(err, sarama.ErrUnsupportedSASLMechanism) || errors.Is(err, kip848.ErrUnsupportedSASLMechanism):
		return &ConnectError{Err: err, auth: true, Hint: "this listener does not enable sasl.mechanism " + c.s.mechanism() + "; set sasl.mechanism to one in the broker's sasl.enabled.mechanisms"}
	case errors.As(err, &alert) || strings.Contains(err.Error(), "tls: bad certificate") || strings.Contains(err.Error(), "certificate required"):
		return &ConnectError{Err: err, auth: true, Hint: "the broker refused the client certificate or wants one; check ssl.keystore.location (or ssl.certificate.location and ssl.key.location)"}
	case dialFailed(err):
		// Nothing listens there, or it cannot be reached: the address is
		// the error, not the security settings.
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, sarama.ErrOutOfBrokers):
		return &ConnectError{Err: err, Hint: "the broker closed the connection; check that security.protocol " + c.Protocol() + " is that of the listener connected to"}
	}
	return err
}

// dialFailed reports whether err is a failure to open a TCP connection
// (refused, unreachable, timed out) rather than one that was opened.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
