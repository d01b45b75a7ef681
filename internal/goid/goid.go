// Package goid tells goroutines apart. The rebalance member and the
// Kafka-coordinated generation loop use it only to tell whether Close or
// Shutdown is called from inside their own call of a handler or listener,
// which must not wait for itself.
package goid

import (
	"bytes"
	"runtime"
	"strconv"
)

// Current returns the id of the calling goroutine, read from the first line
// of its stack trace ("goroutine 42 [running]:"), 0 if unreadable.
func Current() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		id, err := strconv.ParseUint(string(b[:i]), 10, 64)
		if err == nil {
			return id
		}
	}
	return 0
}
