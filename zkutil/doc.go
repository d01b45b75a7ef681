// Package zkutil speaks Kafka's ZooKeeper layout: the ZooKeeper session, the
// paths under /consumers and /brokers, and the JSON and string codecs for the
// values Kafka's Scala consumer (1.1.1) reads and writes there.
//
// Writers produce exactly the bytes Scala writes; readers are tolerant of key
// order and value types, and every decoder reports garbage as an error that
// names the znode instead of panicking.
//
// The package imports nothing else of this module.
package zkutil
