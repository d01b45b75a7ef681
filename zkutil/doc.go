// Package zkutil speaks Kafka's ZooKeeper layout: the ZooKeeper session, the
// paths under /consumers and /brokers, and the JSON and string codecs for the
// values Kafka's Scala consumer (1.1.1) reads and writes there.
//
// Writers produce exactly the bytes Scala writes; readers are tolerant of key
// order and value types, and every decoder reports garbage as an error that
// names the znode instead of panicking.
//
// What is exported is deliberate: Kafka's ZooKeeper layout (paths,
// codecs, the consumer and thread ids) and the Session, for the module's
// layers above (rebalance, connector) and for programs that read or
// change a group's state in ZooKeeper as Kafka's own tools do (the group
// tool, the console consumer). An application that consumes messages
// needs none of it: connector re-exports the few types its API uses
// (TopicPartition, ConsumerThreadID, DecodeError, SessionStats). A test
// of the module keeps a list of the exported names, so that none is added
// or removed by accident. Before 1.0 the exported surface may shrink in a minor
// version; CHANGELOG.md says so when it does.
//
// The package imports nothing else of this module.
package zkutil
