// Package zkassign holds the assignors of a consumer group coordinated
// through ZooKeeper: pure functions from what a member reads of its group
// (AssignmentContext) to the whole group's assignment, as every member
// computes it for itself. RangeAssignor and RoundRobinAssignor decide as
// Kafka's Scala consumer (0.8.2 to 1.1.1) does, partition for partition;
// StickyAssignor is zkconsumer's own, for groups of zkconsumer members
// only, and computes from the group's previous assignment, which its
// members agree on through ZooKeeper (package zkgroup).
//
// Package rebalance offers range and roundrobin to users outside the
// module; package zkgroup runs them in a member; the Kafka-coordinated
// mode's assignors, which assign per member rather than per thread, live
// in package kafkagroup.
package zkassign
