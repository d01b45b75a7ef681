// Package rebalance decides and claims partition ownership for a consumer
// group coordinated through ZooKeeper.
//
// It holds the two assignors of Kafka's Scala consumer, range and roundrobin,
// which give byte-identical decisions to Kafka 1.1.1 so that Go and Scala
// members can share one group, and the claim protocol on
// /consumers/<group>/owners/<topic>/<partition>: compute, release what
// moves away, claim with ephemeral nodes, roll back on conflict and retry.
// Unlike Kafka's Scala consumer, which releases every owner node before it
// computes, a member keeps the nodes of the partitions it is assigned
// again, so that a rebalance writes only for the partitions that move.
//
// For groups coordinated by Kafka's broker instead (package
// rebalance/kafkagroup), it also holds the assignors of Kafka's Java
// consumer, JavaRangeAssignor and JavaRoundRobinAssignor (GroupAssignor,
// NewGroupAssignor), which compute per member id, not per thread.
//
// What is exported is deliberate: the assignors (Assignor, GroupAssignor
// and their implementations, pure functions of a group's state, usable and
// testable on their own), the Member and its Handler, through which the
// connector drives ZooKeeper-coordinated rebalances, and TopicFilter,
// Kafka's whitelist and blacklist. An application does not need this
// package: connector configures the strategy by name and re-exports the
// types its API uses (RebalanceEvent, RebalanceOutcome, RegexError).
// Before 1.0 the exported surface may shrink in a minor version.
//
// The package never imports the fetcher; the connector wires them together
// through the Handler interface.
package rebalance
