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
// It also holds zkconsumer's own StickyAssignor, for groups of zkconsumer
// members only. The sticky strategy computes from the group's previous
// assignment, and every member must compute from the same one without
// talking to the others. The owner nodes cannot serve: during a rebalance
// members release and claim them each at its own pace, so members reading
// them moments apart would see different owners. A sticky group keeps its
// agreed assignment in one persistent node instead,
// /consumers/<group>/sticky_assignment, tagged with a fingerprint of the
// group as it was read (members, threads per topic, partitions) and the
// Cversion of /consumers/<group>/ids. A member that has read the group
// follows the node when its fingerprint matches; reads the group again when
// the node was written for a later listing of the members; and otherwise
// computes the next assignment from its reading with the node's as the
// previous one and writes it, conditional on the version it read. Members
// with the same reading compute the same result from the same node, so of
// members racing to write, one wins and the others follow it. Every sticky
// member watches the node and rebalances when a write makes it differ from
// what it follows, so the group converges on the last write; a member does
// not overwrite a node written for the same listing of members after its
// own write for the same reading (two members that keep reading the group
// differently would otherwise overwrite each other forever), and fails the
// attempt instead, which surfaces as ErrRebalanceFailed.
//
// Every member records its strategy in its registration; a member stays out
// of a group whose strategies it cannot share (StrategyError, admission
// rules in its documentation).
//
// Groups coordinated by Kafka's broker instead are joined through package
// connector (zkconsumer.group.coordination=kafka), whose member holds the
// assignors of Kafka's Java consumer (per member id, not per thread) that
// its classic protocol uses. Of them this package keeps only their names,
// values of partition.assignment.strategy like those of its own
// assignors: StrategyRange, StrategyRoundRobin and
// StrategyCooperativeSticky.
//
// What is exported is deliberate: the assignors (Assignor and its
// implementations, pure functions of a group's state, usable and testable
// on their own), the Member and its Handler, through which the
// connector drives ZooKeeper-coordinated rebalances, and TopicFilter,
// Kafka's whitelist and blacklist. An application does not need this
// package: connector configures the strategy by name and re-exports the
// types its API uses (RebalanceEvent, RebalanceOutcome, RegexError).
// A test of the module keeps a list of the exported names, so that none
// is added or removed by accident. Before 1.0 the
// exported surface may shrink in a minor version.
//
// The package never imports the fetcher; the connector wires them together
// through the Handler interface.
package rebalance
