// Package connector is the public face of zkconsumer: a ConsumerConnector
// joins a consumer group coordinated through ZooKeeper, exactly as Kafka's
// Scala ZookeeperConsumerConnector does, and hands out KafkaStreams.
//
// It owns the lifecycle: configuration, registration under
// /consumers/<group>/ids, the listeners for session expiry, topic partition
// changes and membership, the rebalance loop, offset commits and Shutdown.
//
// Metrics are optional and cost nothing when off: Config.Metrics receives
// the low-rate events (fetch requests, rebalances, commits) and reads the
// rest from ConsumerConnector.Stats when it is scraped, so the message path
// only keeps counters per chunk. The Prometheus adapter is the module
// github.com/zkconsumer/zkconsumer/plugin/prometheus.
package connector
