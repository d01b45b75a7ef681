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
		{"plain cause", &DecodeError{Path: "/a/b", Err: io.ErrUnexpectedEOF}, "bad data in znode /a/b: unexpected EOF"},
		{"nil cause", &DecodeError{Path: "/x"}, "bad data in znode /x: <nil>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.err.Error())
		})
	}
}

func TestDecodeErrorUnwrap(t *testing.T) {
	var err error = &DecodeError{Path: "/p", Err: io.ErrUnexpectedEOF}
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, io.ErrUnexpectedEOF, errors.Unwrap(err))
	var de *DecodeError
	assert.ErrorAs(t, err, &de)
}
