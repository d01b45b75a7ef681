package connector

import (
	"bytes"
	"runtime"
	"strconv"
)

// goroutineID returns the id of the calling goroutine, read from the first
// line of its stack trace ("goroutine 42 [running]:"), 0 if unreadable.
// Kafka mode's generation loop uses it only to tell whether Shutdown is
// called from inside its own call of the rebalance listener, which must
// not wait for itself (package rebalance does the same for ZooKeeper mode).
func goroutineID() uint64 {
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
