package zkutil

import "strings"

// DecodeError reports a znode whose data could not be decoded. Every decoder
// in this package returns one, wrapping the cause, so that callers can log
// which node holds the garbage and decide whether to skip it.
type DecodeError struct {
	// Path is the znode the data was read from.
	Path string
	// Err is the cause; it may be a sentinel such as ErrNoPlaintextEndpoint.
	Err error
}

// Error returns "zkutil: bad data in znode <path>: <cause>". A "zkutil: "
// prefix on the cause is dropped so that it is not repeated.
func (e *DecodeError) Error() string {
	cause := "<nil>"
	if e.Err != nil {
		cause = strings.TrimPrefix(e.Err.Error(), "zkutil: ")
	}
	return "zkutil: bad data in znode " + e.Path + ": " + cause
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

func decodeError(path string, err error) error {
	return &DecodeError{Path: path, Err: err}
}
