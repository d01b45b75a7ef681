//go:build matrix

package testcluster

import (
	"context"
	"testing"
	"time"
)

// TestBrokerReleasesStart starts one broker of every release of the broker
// matrix and checks, from its ApiVersions answer, that it is that release.
func TestBrokerReleasesStart(t *testing.T) {
	wantFetch := map[string]int16{
		BrokerVersion0102: 3,
		BrokerVersion111:  7,
		BrokerVersion282:  12,
	}
	for _, v := range BrokerVersions {
		t.Run(v, func(t *testing.T) {
			c := Private(t, Options{BrokerVersion: v})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			got, err := c.BrokerVersion(ctx)
			if err != nil {
				t.Fatalf("ApiVersions: %v", err)
			}
			t.Logf("Kafka %s: Fetch up to v%d", c.BrokerRelease(), got)
			if want, ok := wantFetch[v]; ok && got != want {
				t.Fatalf("Kafka %s announces Fetch up to v%d, want v%d", v, got, want)
			}
		})
	}
}
