package chaos

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestScanStderrHeartbeatGap: the longest gap between answered heartbeats
// is read from the members' "heartbeats stopped" lines, leaving out the
// generations that lost their membership (a member frozen past its
// session has a gap as long as the freeze, which is the fault, not the
// member's doing).
func TestScanStderrHeartbeatGap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m0.1.stderr")
	require.NoError(t, os.WriteFile(path, []byte(`time=2026-12-06T08:00:00Z level=INFO msg="heartbeats stopped" group=g generation=3 longest_heartbeat_gap=312ms lost=false
time=2026-12-06T08:00:01Z level=INFO msg="heartbeats stopped" group=g generation=4 longest_heartbeat_gap=9.5s lost=true
time=2026-12-06T08:00:02Z level=INFO msg="heartbeats stopped" group=g protocol=consumer epoch=7 longest_heartbeat_gap=1.204s lost=false
time=2026-12-06T08:00:03Z level=INFO msg="generation started" group=g generation=5
`), 0o644))
	panicked, raced, gap := scanStderr(path)
	require.False(t, panicked)
	require.False(t, raced)
	require.Equal(t, 1204*time.Millisecond, gap)
	require.Zero(t, heartbeatGapOf(`msg="heartbeats stopped" longest_heartbeat_gap=bogus`))
}
