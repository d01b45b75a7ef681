package secure

import (
	"errors"
	"fmt"
)

// ErrInvalid is matched by every *KeyError.
var ErrInvalid = errors.New("invalid security setting")

// Hidden replaces secret values in errors and in String output.
const Hidden = "[hidden]"

// KeyError reports one unusable security setting.
type KeyError struct {
	// Key is the property that needs fixing, for example
	// "ssl.truststore.location".
	Key string
	// Value is the offending value, or Hidden for secrets.
	Value string
	// Reason says what is wrong.
	Reason string
}

// Error formats the error as `invalid <key> "<value>": <reason>`.
func (e *KeyError) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.Key, e.Value, e.Reason)
}

// Unwrap returns ErrInvalid.
func (e *KeyError) Unwrap() error { return ErrInvalid }
