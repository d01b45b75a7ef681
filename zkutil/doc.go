// Package zkutil is for Go programs that read or write a consumer group of
// Kafka's ZooKeeper-based consumer as Kafka's own tools do: the group's
// paths under /consumers, and the codecs of the values found there (member
// registrations, partition owners, committed offsets), as Kafka's Scala
// consumer (1.1.1) writes and reads them.
//
// An application that consumes messages needs none of it: the connector
// package is the consumer, and re-exports the few types of this package
// its API uses (TopicPartition, ConsumerThreadID, DecodeError).
//
// The package holds no ZooKeeper client: its functions build paths and
// bytes, and read bytes, so a program reads and writes the nodes with the
// ZooKeeper client it already has. Writers produce exactly the bytes Scala
// writes; readers are tolerant of key order and value types, and every
// decoder reports garbage as a *DecodeError naming the znode instead of
// panicking.
//
// Every path is relative to the chroot of the ZooKeeper connection string
// (zookeeper.connect "zk1:2181/kafka" puts /consumers at /kafka/consumers).
// The package depends on nothing outside the Go standard library.
package zkutil
