package fetch

import "github.com/zkconsumer/zkconsumer/internal/javastr"

// fetcherID returns which of a broker's numFetchers fetchers serves a
// partition, as Kafka's AbstractFetcherManager.getFetcherId computes it:
// Utils.abs(31 * topic.hashCode + partition) % num.consumer.fetchers, with
// Java's 32-bit wrap-around and Utils.abs(n) = n & 0x7fffffff (not Math.abs,
// so Integer.MIN_VALUE maps to 0).
func fetcherID(topic string, partition int32, numFetchers int) int {
	if numFetchers <= 1 {
		return 0
	}
	return int((31*javastr.Hash(topic)+partition)&0x7fffffff) % numFetchers
}
