//go:build !unix

package fetch

// setRcvBuf does nothing where the socket option is not available through
// package syscall; the operating system's default stays.
func setRcvBuf(uintptr, int) error { return nil }
