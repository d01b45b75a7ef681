// Package connector is the public face of zkconsumer: a ConsumerConnector
// joins a consumer group coordinated through ZooKeeper, exactly as Kafka's
// Scala ZookeeperConsumerConnector does, and hands out KafkaStreams.
//
// It owns the lifecycle: configuration, registration under
// /consumers/<group>/ids, the listeners for session expiry, topic partition
// changes and membership, the rebalance loop, offset commits and Shutdown.
package connector
