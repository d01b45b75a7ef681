package secure

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"

	"github.com/IBM/sarama"
)

// minSCRAMIterations is the fewest PBKDF2 iterations a broker may ask for:
// RFC 7677's minimum, and Kafka's default for new SCRAM credentials.
const minSCRAMIterations = 4096

// scramClient is a SCRAM client (RFC 5802) for sarama, for SCRAM-SHA-256
// and SCRAM-SHA-512 as Kafka implements them (no channel binding).
type scramClient struct {
	hash func() hash.Hash

	user, password, authzID string
	gs2Header               string
	clientFirstBare         string
	nonce                   string
	serverSignature         []byte
	step                    int
	done                    bool
}

var _ sarama.SCRAMClient = (*scramClient)(nil)

// Begin prepares the exchange.
func (c *scramClient) Begin(user, password, authzID string) error {
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		return err
	}
	c.user, c.password, c.authzID = user, password, authzID
	c.nonce = base64.RawStdEncoding.EncodeToString(buf)
	c.gs2Header = "n,,"
	if authzID != "" {
		c.gs2Header = "n,a=" + scramName(authzID) + ","
	}
	c.clientFirstBare = "n=" + scramName(user) + ",r=" + c.nonce
	c.step, c.done = 0, false
	return nil
}

// scramName escapes '=' and ',' in a user name (RFC 5802 saslname).
func scramName(s string) string {
	return strings.NewReplacer("=", "=3D", ",", "=2C").Replace(s)
}

// Step returns the answer to the server's challenge.
func (c *scramClient) Step(challenge string) (string, error) {
	c.step++
	switch c.step {
	case 1:
		return c.gs2Header + c.clientFirstBare, nil
	case 2:
		return c.clientFinal(challenge)
	case 3:
		return "", c.verifyServer(challenge)
	}
	return "", errors.New("SCRAM: unexpected extra challenge")
}

// Done reports whether the exchange is complete.
func (c *scramClient) Done() bool { return c.done }

func scramAttrs(msg string) map[byte]string {
	out := map[byte]string{}
	for _, part := range strings.Split(msg, ",") {
		if len(part) >= 2 && part[1] == '=' {
			out[part[0]] = part[2:]
		}
	}
	return out
}

func (c *scramClient) clientFinal(serverFirst string) (string, error) {
	a := scramAttrs(serverFirst)
	if e, ok := a['e']; ok {
		return "", fmt.Errorf("SCRAM: the broker refused: %s", e)
	}
	nonce, salt64, iter64 := a['r'], a['s'], a['i']
	if !strings.HasPrefix(nonce, c.nonce) || len(nonce) == len(c.nonce) {
		return "", errors.New("SCRAM: the broker's nonce does not extend ours")
	}
	salt, err := base64.StdEncoding.DecodeString(salt64)
	if err != nil {
		return "", errors.New("SCRAM: bad salt from the broker")
	}
	iter, err := strconv.Atoi(iter64)
	if err != nil || iter < 1 {
		return "", errors.New("SCRAM: bad iteration count from the broker")
	}
	if iter < minSCRAMIterations {
		// A proof computed with few iterations makes a dictionary attack
		// on the password cheap for whoever answered: a rogue broker, or
		// credentials downgraded on the brokers. Connecting again cannot
		// mend it (ErrAuthentication).
		return "", &ConnectError{auth: true,
			Err:  fmt.Errorf("SCRAM: the broker asks for %d iterations, fewer than the minimum of %d (RFC 7677); no proof sent", iter, minSCRAMIterations),
			Hint: fmt.Sprintf("is it the broker we think? the user's SCRAM credentials must have iterations=%d or more", minSCRAMIterations)}
	}
	salted, err := pbkdf2.Key(c.hash, c.password, salt, iter, c.hash().Size())
	if err != nil {
		return "", fmt.Errorf("SCRAM: %w", err)
	}
	clientKey := c.hmac(salted, "Client Key")
	h := c.hash()
	h.Write(clientKey)
	storedKey := h.Sum(nil)
	withoutProof := "c=" + base64.StdEncoding.EncodeToString([]byte(c.gs2Header)) + ",r=" + nonce
	authMessage := c.clientFirstBare + "," + serverFirst + "," + withoutProof
	sig := c.hmac(storedKey, authMessage)
	proof := make([]byte, len(clientKey))
	for i := range clientKey {
		proof[i] = clientKey[i] ^ sig[i]
	}
	c.serverSignature = c.hmac(c.hmac(salted, "Server Key"), authMessage)
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof), nil
}

func (c *scramClient) verifyServer(serverFinal string) error {
	a := scramAttrs(serverFinal)
	if e, ok := a['e']; ok {
		return fmt.Errorf("SCRAM: the broker refused: %s", e)
	}
	v, err := base64.StdEncoding.DecodeString(a['v'])
	if err != nil || subtle.ConstantTimeCompare(v, c.serverSignature) != 1 {
		return errors.New("SCRAM: the broker's signature is wrong (is it the broker we think?)")
	}
	c.done = true
	return nil
}

func (c *scramClient) hmac(key []byte, msg string) []byte {
	m := hmac.New(c.hash, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}
