//go:build !linux

package main

// isTerminal reports whether w may be a terminal; off Linux every file is
// taken for one, so output is written out message by message as Kafka
// does.
func isTerminal(w any) bool {
	_, ok := w.(interface{ Fd() uintptr })
	return ok
}
