// Package backoff holds the pause between attempts that the fetcher, the
// leader finder, the Kafka-coordinated member and the connector's
// generation loop share.
package backoff

import (
	"context"
	"time"
)

// Sleep waits d or until ctx ends, and reports whether ctx is still alive.
// A d of zero or less does not wait.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
