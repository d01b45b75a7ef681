package zkutil

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDecodeErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		err  *DecodeError
		want string
	}{
		{"plain cause", &DecodeError{Path: "/a/b", Err: io.ErrUnexpectedEOF}, "zkutil: bad data in znode /a/b: unexpected EOF"},
		{"prefixed cause", &DecodeError{Path: "/brokers/ids/1", Err: ErrNoPlaintextEndpoint}, "zkutil: bad data in znode /brokers/ids/1: broker has no PLAINTEXT endpoint"},
		{"nil cause", &DecodeError{Path: "/x"}, "zkutil: bad data in znode /x: <nil>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.err.Error())
		})
	}
}

func TestDecodeErrorUnwrap(t *testing.T) {
	var err error = &DecodeError{Path: "/p", Err: ErrNoPlaintextEndpoint}
	assert.ErrorIs(t, err, ErrNoPlaintextEndpoint)
	assert.Equal(t, ErrNoPlaintextEndpoint, errors.Unwrap(err))
	var de *DecodeError
	assert.ErrorAs(t, err, &de)
}
