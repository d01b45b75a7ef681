package backoff

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSleep(t *testing.T) {
	ctx := context.Background()
	if !Sleep(ctx, 0) || !Sleep(ctx, time.Millisecond) {
		t.Fatal("a live context reports dead")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	start := time.Now()
	if Sleep(cancelled, time.Hour) || Sleep(cancelled, 0) {
		t.Fatal("a cancelled context reports alive")
	}
	if time.Since(start) > time.Second {
		t.Fatal("a cancelled context still waited")
	}
}
