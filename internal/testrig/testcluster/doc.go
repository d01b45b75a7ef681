// Package testcluster starts and controls a real Apache ZooKeeper, alone or
// as an ensemble (Options.ZooKeeperServers), and real Apache Kafka 3.9
// brokers in ZooKeeper mode, or real Apache Kafka 4.x nodes in KRaft mode
// without ZooKeeper (Options.KRaft), as local JVM processes, for
// integration tests, benchmarks and the demo.
//
// The jars come from Maven Central through testinfra/fetch-jars.sh. Every JVM
// runs in its own process group on 127.0.0.1 with free ports and temporary
// data directories; Stop ends only what was started.
//
// Faults: processes are killed (SIGKILL), stopped gracefully, paused
// (SIGSTOP) and restarted one by one or, for ZooKeeper, all at once; the
// servers of an ensemble reach each other through proxies in this process,
// so that one can be cut off from the others (IsolateZooKeeperServer); a
// client's own path to the servers goes through a Proxy or a ProxySet,
// whose Blackhole mode is a network partition. SessionTap expires a
// client's ZooKeeper session on demand.
package testcluster
