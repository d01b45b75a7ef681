package secure

import (
	"errors"
	"testing"
)

type fixedToken struct {
	tok *AccessToken
	err error
}

func (f fixedToken) Token() (*AccessToken, error) { return f.tok, f.err }

func TestTokenProviderIsAdaptedToSarama(t *testing.T) {
	ext := map[string]string{"traceId": "abc"}
	got, err := saramaTokens{fixedToken{tok: &AccessToken{Token: "jwt", Extensions: ext}}}.Token()
	if err != nil || got == nil || got.Token != "jwt" || got.Extensions["traceId"] != "abc" {
		t.Fatalf("Token() = %+v, %v; want the token and its extensions", got, err)
	}

	boom := errors.New("vault sealed")
	if _, err := (saramaTokens{fixedToken{err: boom}}).Token(); !errors.Is(err, boom) {
		t.Fatalf("the provider's error was not passed on: %v", err)
	}

	// A provider that returns neither a token nor an error must not reach
	// sarama as a nil token.
	if got, err := (saramaTokens{fixedToken{}}).Token(); err == nil || got != nil {
		t.Fatalf("Token() with no token = %+v, %v; want an error", got, err)
	}
}
