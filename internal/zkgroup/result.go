package zkgroup

import "time"

// RebalanceOutcome is how a rebalance ended.
type RebalanceOutcome string

const (
	// RebalanceSucceeded: a new generation started.
	RebalanceSucceeded RebalanceOutcome = "success"
	// RebalanceFailed: every one of rebalance.max.retries attempts failed
	// (ErrRebalanceFailed); the member owns nothing until the next one.
	RebalanceFailed RebalanceOutcome = "failure"
	// RebalanceAborted: the member was closing, or its ZooKeeper session
	// expired and the next one is not there yet (its arrival triggers the
	// next rebalance).
	RebalanceAborted RebalanceOutcome = "aborted"
)

// RebalanceResult describes one rebalance (Kafka's syncedRebalance, timed
// by its RebalanceRateAndTime metric), for MemberConfig.OnRebalance.
type RebalanceResult struct {
	// Outcome is how it ended.
	Outcome RebalanceOutcome
	// Attempts is the number of attempts it made.
	Attempts int
	// Duration is the time from its start to its end, backoffs included.
	Duration time.Duration
}
