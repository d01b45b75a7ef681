// Package fetcher is for readers of the design who look for how
// zkconsumer fetches messages from Kafka's brokers; it exports nothing,
// and an application needs nothing from it.
//
// The fetching (one goroutine per broker, the leader finder, the bounded
// decoder of fetch responses) lives under internal/, out of an
// application's reach, so that it can change without breaking a program.
// An application configures it through the connector package: the fields
// of connector.Config named after Kafka's fetch.min.bytes,
// fetch.wait.max.ms, fetch.message.max.bytes, num.consumer.fetchers,
// socket.receive.buffer.bytes, socket.timeout.ms, refresh.leader.backoff.ms,
// check.crcs and isolation.level, and observes it through
// connector.Metrics.Fetch (a connector.FetchEvent per fetch request) and
// connector.Stats.
package fetcher
