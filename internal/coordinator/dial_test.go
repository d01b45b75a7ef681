package coordinator

import (
	"net"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
)

type fixedToken struct{ tok *sarama.AccessToken }

func (f fixedToken) Token() (*sarama.AccessToken, error) { return f.tok, nil }

// TestSASLMechanismMessages: the first message of each mechanism the
// kip848 connections speak, from sarama's SASL settings (RFC 4616's
// PLAIN, RFC 7628's OAUTHBEARER with KIP-342's extensions in key order),
// and a mechanism they do not speak refused by name.
func TestSASLMechanismMessages(t *testing.T) {
	first := func(sc *sarama.Config) string {
		t.Helper()
		m, err := saslMechanism(sc)
		require.NoError(t, err)
		x, err := m.Start()
		require.NoError(t, err)
		msg, done, err := x.Next(nil)
		require.NoError(t, err)
		require.False(t, done)
		_, done, err = x.Next([]byte{})
		require.NoError(t, err)
		require.True(t, done, "done once the broker accepts")
		return string(msg)
	}
	sc := sarama.NewConfig()
	sc.Net.SASL.Mechanism, sc.Net.SASL.User, sc.Net.SASL.Password = sarama.SASLTypePlaintext, "alice", "pw"
	require.Equal(t, "\x00alice\x00pw", first(sc))
	sc.Net.SASL.Mechanism = sarama.SASLTypeOAuth
	sc.Net.SASL.TokenProvider = fixedToken{&sarama.AccessToken{Token: "t.k.n", Extensions: map[string]string{"b": "2", "a": "1"}}}
	require.Equal(t, "n,,\x01auth=Bearer t.k.n\x01a=1\x01b=2\x01\x01", first(sc))
	sc.Net.SASL.Mechanism = sarama.SASLTypeGSSAPI
	_, err := saslMechanism(sc)
	require.ErrorContains(t, err, "GSSAPI")
}

// TestTLSHandshakeIsBounded: a server that accepts the connection and
// never answers the TLS handshake holds the dial for the dial timeout, not
// for ever.
func TestTLSHandshakeIsBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	sc := sarama.NewConfig()
	sc.Net.DialTimeout = 300 * time.Millisecond
	sc.Net.TLS.Enable = true
	start := time.Now()
	_, err = Dialer(sc).Dial("tcp", ln.Addr().String())
	require.Error(t, err)
	require.Less(t, time.Since(start), 5*time.Second)
	(<-accepted).Close()
}
