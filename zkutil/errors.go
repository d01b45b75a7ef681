package zkutil

// DecodeError reports a znode whose data could not be decoded. Every decoder
// in this package returns one, wrapping the cause, so that callers can log
// which node holds the garbage and decide whether to skip it.
type DecodeError struct {
	// Path is the znode the data was read from.
	Path string
	// Err is the cause.
	Err error
}

// Error returns "bad data in znode <path>: <cause>".
func (e *DecodeError) Error() string {
	cause := "<nil>"
	if e.Err != nil {
		cause = e.Err.Error()
	}
	return "bad data in znode " + e.Path + ": " + cause
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

func decodeError(path string, err error) error {
	return &DecodeError{Path: path, Err: err}
}
