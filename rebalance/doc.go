// Package rebalance is for programs that need to know which stream of which
// member owns each partition in a consumer group coordinated through
// ZooKeeper, without joining it: tools that check a group's owner nodes,
// plan a move, or explain a rebalance. It computes the decisions of Kafka's
// Scala consumer (0.8.2 to 1.1.1) for its two strategies, Range and
// RoundRobin, as pure functions of the group: the same owners, partition
// for partition, that Kafka's own members and zkconsumer's members compute
// (a test holds them to Kafka's vectors).
//
// An application that consumes does not need this package: package
// connector joins the group and runs the strategy that
// partition.assignment.strategy names (Config.PartitionAssignmentStrategy).
//
// The input is the group as its members register under
// /consumers/<group>/ids (each member's streams per topic) and the topics'
// partitions under /brokers/topics; the output maps every partition to
// its owning stream, written "<member>-<n>" as in the owner nodes
// /consumers/<group>/owners/<topic>/<partition>.
package rebalance
