package main

import (
	"os"
	"syscall"
	"unsafe"
)

// isTerminal reports whether w is a terminal, whose output is not
// buffered: a person reading it sees each message as it arrives.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
