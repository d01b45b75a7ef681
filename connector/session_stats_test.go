package connector

import (
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
)

// TestSessionStatsOfConvertsEveryState: each state of the ZooKeeper
// session has its connector value, with the same name, so that
// Stats.Session.State never reads as an unknown state.
func TestSessionStatsOfConvertsEveryState(t *testing.T) {
	for _, s := range []zksession.SessionState{zksession.StateConnected, zksession.StateDisconnected, zksession.StateExpired, zksession.StateClosed} {
		got := sessionStatsOf(zksession.SessionStats{State: s, Disconnects: 2, Expirations: 3})
		if got.State.String() != s.String() || got.Disconnects != 2 || got.Expirations != 3 {
			t.Errorf("sessionStatsOf(%v) = %+v (%v)", s, got, got.State)
		}
	}
	if got := sessionStatsOf(zksession.SessionStats{}); got != (SessionStats{}) {
		t.Errorf("before the first session: %+v, want the zero value", got)
	}
}
