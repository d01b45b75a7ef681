package testwait

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitForReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	start := time.Now()
	WaitFor(t, time.Minute, func() bool { return n.Add(1) >= 5 }, "five checks")
	if n.Load() != 5 {
		t.Fatalf("checked %d times, want 5", n.Load())
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("took %v", el)
	}
}

func TestUntilGivesUpAfterTheTimeout(t *testing.T) {
	start := time.Now()
	if Until(30*time.Millisecond, func() bool { return false }) {
		t.Fatal("Until held for a condition that never holds")
	}
	if el := time.Since(start); el < 30*time.Millisecond {
		t.Fatalf("gave up after %v, before the timeout", el)
	}
	if !Until(time.Second, func() bool { return true }) {
		t.Fatal("Until did not hold for a condition that holds")
	}
}

func TestContextEndsAfterDAndAtCleanup(t *testing.T) {
	var ctx context.Context
	t.Run("inner", func(t *testing.T) {
		ctx = Context(t, time.Hour)
		dl, ok := ctx.Deadline()
		if !ok || time.Until(dl) > time.Hour {
			t.Fatalf("deadline %v, %v: want within an hour", dl, ok)
		}
		if end, ok := t.Deadline(); ok && dl.After(end) {
			t.Fatalf("deadline %v after the test's %v", dl, end)
		}
		short := Context(t, 10*time.Millisecond)
		<-short.Done()
		if !errors.Is(short.Err(), context.DeadlineExceeded) {
			t.Fatalf("short context: %v", short.Err())
		}
	})
	if ctx.Err() == nil {
		t.Fatal("context still live after its test ended")
	}
}
