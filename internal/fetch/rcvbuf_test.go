//go:build linux

package fetch

import (
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rcvBufOf dials a local listener with the Control function of
// socket.receive.buffer.bytes = size and returns the connection's
// SO_RCVBUF as the kernel reports it.
func rcvBufOf(t *testing.T, size int) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	d := net.Dialer{Control: rcvBufControl(size)}
	conn, err := d.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	raw, err := conn.(*net.TCPConn).SyscallConn()
	require.NoError(t, err)
	var got int
	var serr error
	require.NoError(t, raw.Control(func(fd uintptr) {
		got, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	}))
	require.NoError(t, serr)
	return got
}

func TestReceiveBufferDefaultKeepsTheOSDefault(t *testing.T) {
	plain := rcvBufOf(t, 0)
	assert.Equal(t, plain, rcvBufOf(t, DefaultConfig().SocketReceiveBufferBytes),
		"the default sets no SO_RCVBUF (Linux keeps autotuning)")
	assert.Equal(t, plain, rcvBufOf(t, -1))
	// Linux doubles the size asked for (bookkeeping overhead) and reports
	// the doubled value.
	assert.Equal(t, 2*65536, rcvBufOf(t, 65536), "a positive size is set")
}
