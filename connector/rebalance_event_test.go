package connector

import (
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/zkgroup"
)

// TestRebalanceEventFromTheMember: the ZooKeeper member's rebalance
// results reach the metrics as RebalanceEvents with the same outcome,
// attempts and duration.
func TestRebalanceEventFromTheMember(t *testing.T) {
	for member, want := range map[zkgroup.RebalanceOutcome]RebalanceOutcome{
		zkgroup.RebalanceSucceeded: RebalanceSucceeded,
		zkgroup.RebalanceFailed:    RebalanceFailed,
		zkgroup.RebalanceAborted:   RebalanceAborted,
	} {
		got := rebalanceEvent(zkgroup.RebalanceResult{Outcome: member, Attempts: 3, Duration: time.Second})
		if got != (RebalanceEvent{Outcome: want, Attempts: 3, Duration: time.Second}) {
			t.Errorf("%s: got %+v", member, got)
		}
	}
}
