package coordinator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/kip848"
)

// Dialer returns what dials a coordinator for a kip848.Conn as sarama
// would dial it with sc: through sc's proxy dialer when one is set (the
// connector's WithDialer, an abortdial tracker, or the TLS dialer of
// secure), with TLS when sc enables it, and, when sc enables SASL, with
// SaslHandshake v1 and the SaslAuthenticate exchange of sc's mechanism
// (PLAIN, SCRAM-SHA-256/512 with sc's SCRAM client, OAUTHBEARER with sc's
// token provider) before the connection is handed over. A refusal is a
// *kip848.SASLError, which secure.Client.Explain explains as it does
// sarama's.
func Dialer(sc *sarama.Config) kip848.Dialer {
	var d kip848.Dialer = &net.Dialer{Timeout: sc.Net.DialTimeout, KeepAlive: sc.Net.KeepAlive}
	if sc.Net.Proxy.Enable && sc.Net.Proxy.Dialer != nil {
		d = sc.Net.Proxy.Dialer
	}
	timeout := sc.Net.DialTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if sc.Net.TLS.Enable {
		d = tlsDialer{d, sc.Net.TLS.Config, timeout}
	}
	if sc.Net.SASL.Enable {
		conf := *sc // what the dials read is never modified
		d = saslDialer{inner: d, conf: &conf, timeout: timeout}
	}
	return d
}

type tlsDialer struct {
	inner   kip848.Dialer
	conf    *tls.Config
	timeout time.Duration // of the handshake
}

// Dial connects through the inner dialer and completes a TLS handshake
// within the dialer's timeout: a server that accepts the connection and
// never answers does not hold it longer.
func (t tlsDialer) Dial(network, addr string) (net.Conn, error) {
	c, err := t.inner.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	conf := t.conf
	if conf == nil {
		conf = &tls.Config{}
	}
	if conf.ServerName == "" && !conf.InsecureSkipVerify {
		conf = conf.Clone()
		conf.ServerName, _, _ = net.SplitHostPort(addr)
	}
	tc := tls.Client(c, conf)
	_ = c.SetDeadline(time.Now().Add(t.timeout))
	if err := tc.Handshake(); err != nil {
		_ = c.Close()
		return nil, err
	}
	_ = c.SetDeadline(time.Time{})
	return tc, nil
}

// saslDialer dials through inner and authenticates the connection.
type saslDialer struct {
	inner   kip848.Dialer
	conf    *sarama.Config // its Net.SASL and ClientID
	timeout time.Duration  // of each SASL request
}

// Dial connects through the inner dialer and authenticates; the
// connection is closed if authentication fails.
func (s saslDialer) Dial(network, addr string) (net.Conn, error) {
	m, err := saslMechanism(s.conf)
	if err != nil {
		return nil, err
	}
	c, err := s.inner.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	if err := kip848.Authenticate(context.Background(), c, s.conf.ClientID, s.timeout, m); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// saslMechanism is the client side of the mechanism conf configures.
func saslMechanism(conf *sarama.Config) (kip848.SASLMechanism, error) {
	sc := conf.Net.SASL
	name := string(sc.Mechanism)
	switch sc.Mechanism {
	case sarama.SASLTypePlaintext, "":
		// RFC 4616: authzid NUL authcid NUL passwd.
		msg := sc.AuthIdentity + "\x00" + sc.User + "\x00" + sc.Password
		return mechanism{sarama.SASLTypePlaintext, func() (kip848.SASLExchange, error) { return &oneShot{msg: []byte(msg)}, nil }}, nil
	case sarama.SASLTypeSCRAMSHA256, sarama.SASLTypeSCRAMSHA512:
		if sc.SCRAMClientGeneratorFunc == nil {
			return nil, fmt.Errorf("SASL %s: no SCRAM client configured", name)
		}
		return mechanism{name, func() (kip848.SASLExchange, error) {
			c := sc.SCRAMClientGeneratorFunc()
			if err := c.Begin(sc.User, sc.Password, sc.SCRAMAuthzID); err != nil {
				return nil, err
			}
			return scramExchange{c}, nil
		}}, nil
	case sarama.SASLTypeOAuth:
		if sc.TokenProvider == nil {
			return nil, fmt.Errorf("SASL %s: no token provider configured", name)
		}
		return mechanism{name, func() (kip848.SASLExchange, error) {
			tok, err := sc.TokenProvider.Token()
			if err != nil {
				return nil, err
			}
			if tok == nil {
				return nil, errors.New("the token provider returned no token")
			}
			return &oneShot{msg: oauthBearerMessage(tok), oauth: true}, nil
		}}, nil
	}
	return nil, fmt.Errorf("SASL mechanism %s is not supported on this connection", name)
}

// mechanism is a kip848.SASLMechanism of a name and a constructor.
type mechanism struct {
	name  string
	start func() (kip848.SASLExchange, error)
}

func (m mechanism) Name() string                        { return m.name }
func (m mechanism) Start() (kip848.SASLExchange, error) { return m.start() }

// oneShot sends one message, PLAIN's or OAUTHBEARER's, and is done when
// the broker accepts it. A broker that refuses an OAUTHBEARER token
// answers with its reasons (RFC 7628 section 3.2.2) and waits for a
// lone 0x01, after which it fails the exchange with its error code.
type oneShot struct {
	msg   []byte
	oauth bool
	sent  bool
}

func (o *oneShot) Next(challenge []byte) ([]byte, bool, error) {
	switch {
	case !o.sent:
		o.sent = true
		return o.msg, false, nil
	case o.oauth && len(challenge) > 0:
		o.oauth = false // once
		return []byte{0x01}, false, nil
	}
	return nil, true, nil
}

// oauthBearerMessage is the client's initial response of RFC 7628 with
// the token and KIP-342's extensions, in a stable order.
func oauthBearerMessage(tok *sarama.AccessToken) []byte {
	b := []byte("n,,\x01auth=Bearer " + tok.Token + "\x01")
	for _, k := range slices.Sorted(maps.Keys(tok.Extensions)) {
		b = append(b, k+"="+tok.Extensions[k]+"\x01"...)
	}
	return append(b, 0x01)
}

// scramExchange runs a sarama.SCRAMClient (internal/secure's): its first
// step takes no challenge, and it is done once it has checked the
// broker's signature.
type scramExchange struct{ c sarama.SCRAMClient }

func (s scramExchange) Next(challenge []byte) ([]byte, bool, error) {
	msg, err := s.c.Step(string(challenge))
	if err != nil {
		return nil, false, err
	}
	if s.c.Done() {
		return nil, true, nil
	}
	return []byte(msg), false, nil
}

// KIP848Versions converts a kip848.Conn's ApiVersions answer for
// Negotiate.
func KIP848Versions(c *kip848.Conn, keys ...API) map[int16]Range {
	out := make(map[int16]Range, len(keys))
	for _, k := range keys {
		if v, ok := c.Versions(k.Key); ok {
			out[k.Key] = Range{Min: v.Min, Max: v.Max}
		}
	}
	return out
}
