// Package fetcher moves data from Kafka brokers into stream queues.
//
// A ConsumerFetcherManager owns a leader finder, which resolves the leader of
// every assigned partition, and one fetcher per (broker, fetcher id), which
// sends multi-partition fetch requests and enqueues one FetchedDataChunk per
// partition into the queue of the stream that owns it. It uses sarama's
// protocol layer only; the fetch loop is ours.
package fetcher
