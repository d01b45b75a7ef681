// Package testcluster starts and controls a real Apache ZooKeeper and real
// Apache Kafka 3.9 brokers in ZooKeeper mode, or real Apache Kafka 4.x nodes
// in KRaft mode without ZooKeeper (Options.KRaft), as local JVM processes,
// for integration tests, benchmarks and the demo.
//
// The jars come from Maven Central through testinfra/fetch-jars.sh. Every JVM
// runs in its own process group on 127.0.0.1 with free ports and temporary
// data directories; Stop ends only what was started.
package testcluster
