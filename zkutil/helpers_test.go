package zkutil

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireDecodeError asserts that err is a *DecodeError naming path, with
// a message in its format and no package's name in front.
func requireDecodeError(t testing.TB, err error, path string) *DecodeError {
	t.Helper()
	require.Error(t, err)
	var de *DecodeError
	require.True(t, errors.As(err, &de), "error %v (%T) is not a *DecodeError", err, err)
	require.Equal(t, path, de.Path)
	require.NotNil(t, de.Err)
	require.True(t, strings.HasPrefix(err.Error(), "bad data in znode "+path+": "), "message %q", err.Error())
	return de
}
