package connector

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The minimum fetch rate is over the brokers fetched from in the last
// minute; a broker silent for a minute is forgotten.
func TestFetchRatesMin(t *testing.T) {
	var r fetchRates
	t0 := time.Unix(1_000_000, 0)
	require.Zero(t, r.min(t0))
	for i := range 120 { // broker 1: 2 per second
		r.mark(1, t0.Add(time.Duration(i)*500*time.Millisecond))
	}
	for i := range 60 { // broker 2: 1 per second
		r.mark(2, t0.Add(time.Duration(i)*time.Second))
	}
	now := t0.Add(59 * time.Second)
	require.InDelta(t, 1.0, r.min(now), 1e-9)
	// Both stop; their rates fall as their requests age out.
	require.InDelta(t, 30.0/60, r.min(t0.Add(89*time.Second)), 1e-9)
	require.InDelta(t, 1.0/60, r.min(t0.Add(118*time.Second)), 1e-9)
	require.Len(t, r.brokers, 2)
	// A minute after its last request, a broker is forgotten.
	require.Zero(t, r.min(t0.Add(119*time.Second)))
	require.Empty(t, r.brokers)
	r.mark(3, t0.Add(200*time.Second))
	require.InDelta(t, 1.0/60, r.min(t0.Add(200*time.Second)), 1e-9)
}
