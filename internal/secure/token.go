package secure

import (
	"errors"

	"github.com/IBM/sarama"
)

// AccessToken is a token for SASL/OAUTHBEARER, with the SASL extensions
// to send along with it.
type AccessToken struct {
	// Token is the token itself, a JWT for Kafka's default validator.
	Token string
	// Extensions are optional key-value pairs sent with the token in the
	// client's initial SASL response (KIP-342, Kafka 2.1+); brokers
	// ignore the ones they do not expect.
	Extensions map[string]string
}

// TokenProvider supplies the tokens of SASL/OAUTHBEARER
// (Settings.TokenProvider). Token is called for every new broker
// connection, so it should cache a token until shortly before it expires.
type TokenProvider interface {
	Token() (*AccessToken, error)
}

// saramaTokens adapts a TokenProvider to sarama's, so that no sarama type
// appears in Settings.
type saramaTokens struct{ p TokenProvider }

func (t saramaTokens) Token() (*sarama.AccessToken, error) {
	tok, err := t.p.Token()
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, errors.New("the OAUTHBEARER token provider returned no token")
	}
	return &sarama.AccessToken{Token: tok.Token, Extensions: tok.Extensions}, nil
}
