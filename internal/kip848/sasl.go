package kip848

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// API keys of SASL authentication (KIP-43, KIP-152).
const (
	APIKeySaslHandshake    = 17
	APIKeySaslAuthenticate = 36
)

// Versions of the SASL requests Authenticate sends: SaslHandshake 1 (the
// exchange then goes in SaslAuthenticate requests; version 0, which sent
// it bare, is gone from Kafka 4.0) and SaslAuthenticate 0, which every
// broker since Kafka 1.0 speaks.
const (
	SaslHandshakeVersion    = 1
	SaslAuthenticateVersion = 0
)

// maxSASLRounds bounds the SaslAuthenticate requests of one exchange
// (SCRAM needs two, PLAIN and OAUTHBEARER one): a broker that keeps
// challenging is refused rather than answered forever.
const maxSASLRounds = 8

// Sentinels matched (errors.Is) by *SASLError.
var (
	// ErrSASLAuthenticationFailed: the broker refused the credentials
	// (SASL_AUTHENTICATION_FAILED) or the exchange (ILLEGAL_SASL_STATE).
	ErrSASLAuthenticationFailed = errors.New("SASL authentication failed")
	// ErrUnsupportedSASLMechanism: the listener does not enable the
	// mechanism (UNSUPPORTED_SASL_MECHANISM).
	ErrUnsupportedSASLMechanism = errors.New("SASL mechanism not enabled")
)

// SASLMechanism is the client side of one SASL mechanism.
type SASLMechanism interface {
	// Name is the mechanism as SaslHandshake names it: "PLAIN",
	// "SCRAM-SHA-512", ...
	Name() string
	// Start begins the exchange of one new connection.
	Start() (SASLExchange, error)
}

// SASLExchange is one authentication in progress.
type SASLExchange interface {
	// Next is given the broker's last answer (nil before the first
	// message) and returns the next message to send, or done once the
	// broker's answers complete the exchange (then nothing is sent).
	Next(challenge []byte) (msg []byte, done bool, err error)
}

// SASLError is a broker's refusal of a SASL authentication. It matches
// ErrUnsupportedSASLMechanism or ErrSASLAuthenticationFailed.
type SASLError struct {
	// Addr is the broker's address.
	Addr string
	// Mechanism is the mechanism tried.
	Mechanism string
	// Code is Kafka's error code: 33 UNSUPPORTED_SASL_MECHANISM, 34
	// ILLEGAL_SASL_STATE, 58 SASL_AUTHENTICATION_FAILED, or another.
	Code int16
	// Message is the broker's error message, if any.
	Message string
	// Enabled are the listener's mechanisms (code 33).
	Enabled []string
}

// saslErrorNames are Kafka's names of the error codes of SASL refusals.
var saslErrorNames = map[int16]string{33: "UNSUPPORTED_SASL_MECHANISM", 34: "ILLEGAL_SASL_STATE", 58: "SASL_AUTHENTICATION_FAILED"}

// Error describes the refusal; it never contains what was sent.
func (e *SASLError) Error() string {
	msg := fmt.Sprintf("SASL %s authentication with %s failed: error code %d", e.Mechanism, e.Addr, e.Code)
	if name, ok := saslErrorNames[e.Code]; ok {
		msg += " " + name
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Enabled != nil {
		msg += " (the listener enables " + strings.Join(e.Enabled, ", ") + ")"
	}
	return msg
}

// Unwrap returns the sentinel of e's code, nil for codes without one.
func (e *SASLError) Unwrap() error {
	switch e.Code {
	case 33:
		return ErrUnsupportedSASLMechanism
	case 34, 58:
		return ErrSASLAuthenticationFailed
	}
	return nil
}

// Authenticate runs SaslHandshake and the SaslAuthenticate exchange of m
// on nc, a connection to a SASL listener on which nothing was sent yet.
// Each request waits at most timeout for its answer, and ctx can end the
// exchange. A refusal is a *SASLError; on any error nc must be closed.
func Authenticate(ctx context.Context, nc net.Conn, clientID string, timeout time.Duration, m SASLMechanism) error {
	c := &Conn{addr: nc.RemoteAddr().String(), clientID: clientID, timeout: timeout, c: nc}
	var e encoder
	e.string(m.Name())
	body, err := c.roundTrip(ctx, APIKeySaslHandshake, SaslHandshakeVersion, e.b, false)
	if err != nil {
		return fmt.Errorf("SaslHandshake to %s: %w", c.addr, err)
	}
	code, enabled, err := DecodeSaslHandshakeResponse(body)
	if err != nil {
		return fmt.Errorf("SaslHandshake to %s: %w", c.addr, err)
	}
	if code != 0 {
		return &SASLError{Addr: c.addr, Mechanism: m.Name(), Code: code, Enabled: enabled}
	}
	x, err := m.Start()
	if err != nil {
		return fmt.Errorf("SASL %s with %s: %w", m.Name(), c.addr, err)
	}
	var challenge []byte
	for range maxSASLRounds {
		msg, done, err := x.Next(challenge)
		if err != nil {
			return fmt.Errorf("SASL %s with %s: %w", m.Name(), c.addr, err)
		}
		if done {
			return nil
		}
		e = encoder{}
		e.int32(int32(len(msg)))
		e.b = append(e.b, msg...)
		body, err := c.roundTrip(ctx, APIKeySaslAuthenticate, SaslAuthenticateVersion, e.b, false)
		if err != nil {
			return fmt.Errorf("SaslAuthenticate to %s: %w", c.addr, err)
		}
		code, message, auth, err := DecodeSaslAuthenticateResponse(body)
		if err != nil {
			return fmt.Errorf("SaslAuthenticate to %s: %w", c.addr, err)
		}
		if code != 0 {
			return &SASLError{Addr: c.addr, Mechanism: m.Name(), Code: code, Message: message}
		}
		challenge = auth
		if challenge == nil {
			challenge = []byte{}
		}
	}
	return fmt.Errorf("SASL %s with %s: no end after %d rounds", m.Name(), c.addr, maxSASLRounds)
}

// DecodeSaslHandshakeResponse decodes a SaslHandshake version 1 answer:
// its error code and the listener's mechanisms.
func DecodeSaslHandshakeResponse(b []byte) (code int16, mechanisms []string, err error) {
	d := &decoder{b: b, what: "SaslHandshake response"}
	code = d.int16("ErrorCode")
	n := d.int32("Mechanisms length")
	if d.err == nil && (n < -1 || int64(n)*2 > int64(d.remaining())) {
		d.fail("Mechanisms claims %d elements, %d bytes left", n, d.remaining())
	}
	for range max(n, 0) {
		if d.err != nil {
			break
		}
		mechanisms = append(mechanisms, d.int16String("Mechanism"))
	}
	if err := d.end(); err != nil {
		return 0, nil, err
	}
	return code, mechanisms, nil
}

// DecodeSaslAuthenticateResponse decodes a SaslAuthenticate version 0
// answer: its error code and message and the broker's SASL bytes (nil if
// null).
func DecodeSaslAuthenticateResponse(b []byte) (code int16, message string, auth []byte, err error) {
	d := &decoder{b: b, what: "SaslAuthenticate response"}
	code = d.int16("ErrorCode")
	message = d.int16String("ErrorMessage")
	n := d.int32("AuthBytes length")
	if d.err == nil && (n < -1 || int64(n) > int64(d.remaining())) {
		d.fail("AuthBytes claims %d bytes, %d left", n, d.remaining())
	}
	if d.err == nil && n >= 0 {
		auth = append([]byte{}, d.take(int(n), "AuthBytes")...)
	}
	if err := d.end(); err != nil {
		return 0, "", nil, err
	}
	return code, message, auth, nil
}
