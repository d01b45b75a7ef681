package grouplease

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHeartbeatIntervalKeepsTheLease(t *testing.T) {
	for _, tc := range []struct{ configured, term, want time.Duration }{
		{3 * time.Second, 45 * time.Second, 3 * time.Second},        // Java's defaults: unchanged
		{5 * time.Second, 6 * time.Second, 1500 * time.Millisecond}, // accepted by Kafka, outlasts the 4.5 s lease
		{10 * time.Second, 12 * time.Second, 3 * time.Second},       // heartbeat.interval.ms just under session.timeout.ms
		{2 * time.Second, 8 * time.Second, 2 * time.Second},         // exactly a third of the lease
		{time.Second, 0, time.Second},                               // no term: as configured
	} {
		got := HeartbeatInterval(tc.configured, tc.term)
		require.Equal(t, tc.want, got, "interval %v, term %v", tc.configured, tc.term)
		if tc.term > 0 {
			lease := time.Duration(float64(tc.term) * Fraction)
			require.LessOrEqual(t, renewalsPerLease*got, lease, "three heartbeats fit in one lease")
		}
	}
}

func TestGapsKeepTheLongest(t *testing.T) {
	var logs bytes.Buffer
	g := Gaps{Log: slog.New(slog.NewTextHandler(&logs, nil)), Session: 3 * time.Second}
	require.Zero(t, g.Longest())
	start := time.Now().Add(-300 * time.Millisecond)
	last := time.Now()
	g.Record(start, last)
	require.GreaterOrEqual(t, g.Longest(), 300*time.Millisecond)
	g.Record(last, time.Now())
	require.GreaterOrEqual(t, g.Longest(), 300*time.Millisecond, "a shorter gap keeps the longest")
	require.Empty(t, logs.String(), "gaps under half the session are not logged")
	g.Record(time.Now().Add(-2*time.Second), time.Now())
	require.GreaterOrEqual(t, g.Longest(), 2*time.Second)
	require.Less(t, g.Longest(), 3*time.Second)
	require.Contains(t, logs.String(), `msg="heartbeats went unanswered"`, "a gap of half the session is logged")
	require.Contains(t, logs.String(), "gap_from=")
}
