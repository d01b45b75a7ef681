// Package testwait holds the waiting helpers every test of the module
// shares: WaitFor polls a condition until it holds, Context bounds a test's
// calls by a duration and by the test's own deadline. It depends on the
// standard library only, so that unit tests of the lowest packages can use
// it without pulling in the cluster harness.
package testwait

import (
	"context"
	"testing"
	"time"
)

// maxPoll is the longest pause between two checks of a condition. The
// pause starts at a millisecond and doubles up to it, so that a condition
// that holds soon (a unit test's) is seen at once, and one that takes
// seconds (a cluster's) is not asked hundreds of times a second.
const maxPoll = 50 * time.Millisecond

// WaitFor checks cond until it holds and fails the test with
// "timed out after <timeout> waiting for <format, args>" when timeout
// passes first. Call it from the test's goroutine.
func WaitFor(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for "+format, append([]any{timeout}, args...)...)
		}
		time.Sleep(pause)
		pause = min(2*pause, maxPoll)
	}
}

// Until checks cond until it holds, as WaitFor, and returns false, instead
// of failing the test, when timeout passes first.
func Until(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, maxPoll)
	}
	return true
}

// Context returns a context that ends after d, or a little before the
// test's own deadline (go test -timeout) if that comes first, so that a
// stuck call fails the test with its own message instead of the binary's
// panic; it is cancelled when the test ends.
func Context(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := dt.Deadline(); ok {
			// Leave the test a moment to report and clean up.
			ctx, cancel = withEarlier(ctx, cancel, end.Add(-5*time.Second))
		}
	}
	t.Cleanup(cancel)
	return ctx
}

// withEarlier bounds ctx also by end when end comes before ctx's deadline.
func withEarlier(ctx context.Context, cancel context.CancelFunc, end time.Time) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && !end.Before(dl) {
		return ctx, cancel
	}
	inner, innerCancel := context.WithDeadline(ctx, end)
	return inner, func() { innerCancel(); cancel() }
}
