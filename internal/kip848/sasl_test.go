package kip848

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// encodeSaslHandshakeResponse encodes a SaslHandshake v1 answer.
func encodeSaslHandshakeResponse(code int16, mechanisms ...string) []byte {
	var e encoder
	e.int16(code)
	e.int32(int32(len(mechanisms)))
	for _, m := range mechanisms {
		e.string(m)
	}
	return e.b
}

// encodeSaslAuthenticateResponse encodes a SaslAuthenticate v0 answer.
func encodeSaslAuthenticateResponse(code int16, message string, auth []byte) []byte {
	var e encoder
	e.int16(code)
	if message == "" {
		e.int16(-1)
	} else {
		e.string(message)
	}
	e.int32(int32(len(auth)))
	e.b = append(e.b, auth...)
	return e.b
}

// scripted is a mechanism whose exchange sends msgs in turn, checking
// that the broker's answers are challenges.
type scripted struct {
	name       string
	msgs       []string
	challenges []string // expected answers, one per message
	got        []string
}

func (s *scripted) Name() string                 { return s.name }
func (s *scripted) Start() (SASLExchange, error) { return s, nil }
func (s *scripted) Next(challenge []byte) ([]byte, bool, error) {
	if challenge != nil {
		s.got = append(s.got, string(challenge))
	}
	if len(s.got) == len(s.msgs) {
		return nil, true, nil
	}
	return []byte(s.msgs[len(s.got)]), false, nil
}

// saslPeer answers the SASL requests of one connection from a script:
// the handshake answer, then one SaslAuthenticate answer per entry of
// auth; it checks the request keys, versions and the messages sent.
func saslPeer(server net.Conn, mechanism string, handshake []byte, auth [][]byte, want []string) chan error {
	done := make(chan error, 1)
	go func() {
		defer server.Close()
		done <- func() error {
			for i := range 1 + len(auth) {
				var size [4]byte
				if _, err := readFull(server, size[:]); err != nil {
					return err
				}
				frame := make([]byte, binary.BigEndian.Uint32(size[:]))
				if _, err := readFull(server, frame); err != nil {
					return err
				}
				d := &decoder{b: frame, what: "header"}
				key, ver, corr := d.int16(""), d.int16(""), d.int32("")
				_ = d.int16String("")
				body := handshake
				if i == 0 {
					if key != APIKeySaslHandshake || ver != SaslHandshakeVersion || d.int16String("") != mechanism {
						return errors.New("first request is not SaslHandshake v1 of the mechanism")
					}
				} else {
					n := d.int32("")
					sent := string(d.take(int(n), ""))
					if key != APIKeySaslAuthenticate || ver != SaslAuthenticateVersion || d.err != nil || sent != want[i-1] {
						return errors.New("bad SaslAuthenticate " + sent)
					}
					body = auth[i-1]
				}
				out := binary.BigEndian.AppendUint32(nil, 0)
				out = binary.BigEndian.AppendUint32(out, uint32(corr))
				out = append(out, body...)
				binary.BigEndian.PutUint32(out, uint32(len(out)-4))
				if _, err := server.Write(out); err != nil {
					return err
				}
			}
			return nil
		}()
	}()
	return done
}

// TestAuthenticateExchange: SaslHandshake v1, then one SaslAuthenticate v0
// per message, each challenge handed to the mechanism, until it is done.
func TestAuthenticateExchange(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	m := &scripted{name: "SCRAM-SHA-512", msgs: []string{"first", "final"}}
	done := saslPeer(server, m.name, encodeSaslHandshakeResponse(0, "PLAIN", "SCRAM-SHA-512"),
		[][]byte{encodeSaslAuthenticateResponse(0, "", []byte("server-first")), encodeSaslAuthenticateResponse(0, "", []byte("server-final"))},
		[]string{"first", "final"})
	require.NoError(t, Authenticate(context.Background(), client, "cid", 5*time.Second, m))
	require.NoError(t, <-done)
	require.Equal(t, []string{"server-first", "server-final"}, m.got)
}

// TestAuthenticateRefusals: a mechanism the listener does not enable and
// refused credentials are *SASLError values matching their sentinels,
// with the broker's words.
func TestAuthenticateRefusals(t *testing.T) {
	t.Run("mechanism", func(t *testing.T) {
		client, server := net.Pipe()
		defer client.Close()
		done := saslPeer(server, "SCRAM-SHA-256", encodeSaslHandshakeResponse(33, "PLAIN"), nil, nil)
		err := Authenticate(context.Background(), client, "cid", 5*time.Second, &scripted{name: "SCRAM-SHA-256", msgs: []string{"x"}})
		require.ErrorIs(t, err, ErrUnsupportedSASLMechanism)
		var se *SASLError
		require.ErrorAs(t, err, &se)
		require.Equal(t, []string{"PLAIN"}, se.Enabled)
		require.ErrorContains(t, err, "error code 33 UNSUPPORTED_SASL_MECHANISM (the listener enables PLAIN)")
		require.NoError(t, <-done)
	})
	t.Run("credentials", func(t *testing.T) {
		client, server := net.Pipe()
		defer client.Close()
		done := saslPeer(server, "PLAIN", encodeSaslHandshakeResponse(0, "PLAIN"),
			[][]byte{encodeSaslAuthenticateResponse(58, "Authentication failed: Invalid username or password", nil)}, []string{"\x00u\x00secret"})
		err := Authenticate(context.Background(), client, "cid", 5*time.Second, &scripted{name: "PLAIN", msgs: []string{"\x00u\x00secret"}})
		require.ErrorIs(t, err, ErrSASLAuthenticationFailed)
		require.ErrorContains(t, err, "Invalid username or password")
		require.NotContains(t, err.Error(), "secret")
		require.NoError(t, <-done)
	})
}

// TestSaslDecoders: the answers decode to what was encoded.
func TestSaslDecoders(t *testing.T) {
	code, mechs, err := DecodeSaslHandshakeResponse(encodeSaslHandshakeResponse(0, "PLAIN", "SCRAM-SHA-256"))
	require.NoError(t, err)
	require.Zero(t, code)
	require.Equal(t, []string{"PLAIN", "SCRAM-SHA-256"}, mechs)
	code, msg, auth, err := DecodeSaslAuthenticateResponse(encodeSaslAuthenticateResponse(58, "no", []byte("v=x")))
	require.NoError(t, err)
	require.Equal(t, int16(58), code)
	require.Equal(t, "no", msg)
	require.True(t, bytes.Equal([]byte("v=x"), auth))
	_, _, _, err = DecodeSaslAuthenticateResponse([]byte{0, 0, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff})
	require.ErrorIs(t, err, ErrMalformed)
	_, _, err = DecodeSaslHandshakeResponse([]byte{0, 0, 0x7f, 0xff, 0xff, 0xff})
	require.ErrorIs(t, err, ErrMalformed)
}
