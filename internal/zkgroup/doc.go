// Package zkgroup is the member of a consumer group coordinated through
// ZooKeeper: it registers, reads the group, computes the assignment with
// one of package zkassign's assignors (range and roundrobin, which decide
// as Kafka 1.1.1 does so that Go and Scala members can share one group, or
// sticky), and claims what it is assigned.
//
// The claim protocol works on
// /consumers/<group>/owners/<topic>/<partition>: compute, release what
// moves away, claim with ephemeral nodes, roll back on conflict and retry.
// Unlike Kafka's Scala consumer, which releases every owner node before it
// computes, a member keeps the nodes of the partitions it is assigned
// again, so that a rebalance writes only for the partitions that move.
//
// zkconsumer's own sticky strategy (zkassign.StickyAssignor) is for
// groups of zkconsumer members only. It computes from the group's previous
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
// The package never imports the fetcher; the connector wires them together
// through the Handler interface.
package zkgroup
