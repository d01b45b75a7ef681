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
time=2026-12-06T08:00:09Z level=WARN msg="heartbeats went unanswered" group=g heartbeat_gap=3.5s gap_from=2026-12-06T08:00:05.5Z gap_until=2026-12-06T08:00:09Z session_timeout=6s
`), 0o644))
	sc := scanStderr(path)
	require.False(t, sc.panicked)
	require.False(t, sc.raced)
	require.Equal(t, 1204*time.Millisecond, sc.heartbeatGap)
	from := time.Date(2026, 12, 6, 8, 0, 5, 500e6, time.UTC).UnixNano()
	require.Equal(t, []Span{{From: from, Until: from + 3500e6}}, sc.longGaps)
	require.Zero(t, heartbeatGapOf(`msg="heartbeats stopped" longest_heartbeat_gap=bogus`))
}

// TestGapExcusedByFaults: a long gap is the fault's when it overlaps a
// fault that kept the member from its coordinator or froze it, not when
// it overlaps another member's fault or none.
func TestGapExcusedByFaults(t *testing.T) {
	v := &verifier{res: &Result{Faults: []FaultRecord{
		{PlannedFault: PlannedFault{Kind: CoordinatorPause}, Start: 100, End: 200, StoreCut: []string{"*"}},
		{PlannedFault: PlannedFault{Kind: MemberBrokerCutLong, Member: 2}, Start: 300, End: 400, Inc: 1, StoreCut: []string{"m2.1"}},
		{PlannedFault: PlannedFault{Kind: MemberStop, Member: 3}, Start: 500, End: 600, Inc: 4},
		{PlannedFault: PlannedFault{Kind: BrokerKill}, Start: 700, End: 800},
	}}}
	require.True(t, v.gapExcused("m1.1", Span{From: 150, Until: 250}), "the coordinator paused")
	require.True(t, v.gapExcused("m2.1", Span{From: 250, Until: 350}), "the member cut off")
	require.False(t, v.gapExcused("m1.1", Span{From: 250, Until: 350}), "another member cut off")
	require.True(t, v.gapExcused("m3.4", Span{From: 590, Until: 900}), "the member frozen")
	require.False(t, v.gapExcused("m1.1", Span{From: 650, Until: 900}), "a broker killed: heartbeats must not wait for it")
}
