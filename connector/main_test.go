package connector

import (
	"os"
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	testcluster.Main(m)
}

// timedSlot is held by the one test of the package running under
// oneAtATime.
var timedSlot = make(chan struct{}, 1)

// oneAtATime marks t parallel and then waits until no other test of this
// package that holds a wall-clock bound against its own traffic is
// running: deliveries counted during a 2 s hold, a lease that lapses
// within a session's last seconds, a member frozen or cut off through a
// proxy of its own until its lease lapses. Such a test runs beside the
// package's other parallel tests, never beside another of its kind: side
// by side they failed at load average 80-97 (34ffbdc), and run serially
// they left the machine idle for the three minutes before the package's
// parallel tests could start. Its slot is given back after every other
// cleanup of the test.
func oneAtATime(t *testing.T) {
	t.Helper()
	t.Parallel()
	timedSlot <- struct{}{}
	t.Cleanup(func() { <-timedSlot })
}
