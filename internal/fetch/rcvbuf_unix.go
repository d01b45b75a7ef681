//go:build unix

package fetch

import "syscall"

// setRcvBuf sets SO_RCVBUF on the socket fd.
func setRcvBuf(fd uintptr, size int) error {
	return syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, size)
}
