// Package strategyname names the values of partition.assignment.strategy
// that the module's assignors answer to, in both coordination modes: the
// ZooKeeper mode's (Range, RoundRobin, Sticky) and Kafka mode's classic
// protocol's (Range, RoundRobin, CooperativeSticky).
package strategyname

import "errors"

const (
	// Range is Kafka's range assignor, the default: "range".
	Range = "range"
	// RoundRobin is Kafka's roundrobin assignor: "roundrobin".
	RoundRobin = "roundrobin"
	// Sticky is zkconsumer's sticky strategy for ZooKeeper-coordinated
	// groups of zkconsumer members only (Kafka's Scala consumer does not
	// know it): "sticky".
	Sticky = "sticky"
	// CooperativeSticky is the protocol name of Kafka's Java
	// CooperativeStickyAssignor, the assignor of the cooperative rebalance
	// protocol (KIP-429) in a group coordinated by Kafka's broker:
	// "cooperative-sticky".
	CooperativeSticky = "cooperative-sticky"
)

// ErrUnknown is wrapped by the errors of the assignor factories of both
// modes for a strategy they do not know. Scala silently falls back to
// range for unknown names; zkconsumer refuses them instead, because
// members that disagree on the strategy make conflicting claims forever.
var ErrUnknown = errors.New("unknown partition.assignment.strategy")
