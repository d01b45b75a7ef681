// Package connector is the public face of zkconsumer: a ConsumerConnector
// joins a consumer group coordinated through ZooKeeper, exactly as Kafka's
// Scala ZookeeperConsumerConnector does, and hands out KafkaStreams.
//
// It owns the lifecycle: configuration, registration under
// /consumers/<group>/ids, the listeners for session expiry, topic partition
// changes and membership, the rebalance loop, offset commits and Shutdown.
// The application gets streams to read and nothing that could break what
// the connector guarantees: nothing an application can reach puts a
// message of its own on a stream.
//
// There is one way to do each thing. New(ctx, cfg, opts...) makes a
// connector (ctx bounds connecting; WithDialer carries every connection
// it opens, to ZooKeeper and to the brokers). CreateMessageStreams returns
// the streams; each is read from one goroutine with msg, err :=
// s.Next(ctx), in a loop that ends on ErrShutdown or when ctx ends, and
// its other errors (a *PartitionError, ErrConsumerTimeout) leave the
// stream usable. A message counts as consumed when Next is called again
// or when s.MarkConsumed(msg) marks it, from any goroutine; commits
// (automatic, CommitOffsets, before a rebalance moves a partition, in
// Shutdown) store what was consumed, and CommitMessages commits given
// messages. Shutdown ends the streams.
//
// Everything an application names is reachable from this package alone
// (KafkaStream, Message, the errors, the listener and config types,
// Dialer, TokenProvider): the types declared in the module's
// other packages are re-exported here as aliases.
//
// What the application can ask and control:
//   - Assignment: the partitions this member owns now, or why it owns none
//     (the first rebalance failed, a rebalance is in progress, the session
//     was lost, ...), the same reason CommitOffsets returns when it has
//     nothing to commit;
//   - CommitOffsets and CommitOffsetsMap, with auto.commit.enable=false,
//     also from a RebalanceListener (RebalanceListenerFuncs adapts
//     functions), which is given the connector;
//   - Pause and Resume: backpressure on some partitions without leaving the
//     group;
//   - Errors, Stats and Shutdown.
//
// The errors an application matches are all reachable from this package
// (ErrRebalanceFailed, ErrOwnershipLost, ErrShutdown, PartitionError, ...),
// re-exported from the packages that define them; see Errors.
//
// With zkconsumer.group.coordination=kafka the connector is instead a
// member of a group coordinated by Kafka's brokers, as Kafka's Java
// consumer is, so that it needs no ZooKeeper (Kafka 4.x, KRaft) and can
// share a group with Java consumers. The streams, the fetchers and the rest
// of the data path are the same; each generation the coordinator announces
// takes the ZooKeeper rebalance's place, commits carry the generation, and
// each message is handed out only while the generation's heartbeat lease
// holds. With partition.assignment.strategy=cooperative-sticky it runs
// Kafka's cooperative protocol (KIP-429): the partitions a member keeps are
// delivered throughout a rebalance, and only those that move are stopped,
// committed and handed over.
//
// Metrics are optional and cost nothing when off: Config.Metrics receives
// the low-rate events (fetch requests, rebalances, commits) and reads the
// rest from ConsumerConnector.Stats when it is scraped, so the message path
// only keeps counters per chunk. The Prometheus adapter is the module
// github.com/zkconsumer/zkconsumer/plugin/prometheus.
package connector
