package fetcher

import "unicode/utf16"

// fetcherID returns which of a broker's numFetchers fetchers serves a
// partition, as Kafka's AbstractFetcherManager.getFetcherId computes it:
// Utils.abs(31 * topic.hashCode + partition) % num.consumer.fetchers, with
// Java's 32-bit wrap-around and Utils.abs(n) = n & 0x7fffffff (not Math.abs,
// so Integer.MIN_VALUE maps to 0).
func fetcherID(topic string, partition int32, numFetchers int) int {
	if numFetchers <= 1 {
		return 0
	}
	return int((31*javaStringHash(topic)+partition)&0x7fffffff) % numFetchers
}

// javaStringHash returns Java's String.hashCode of s: h = 31*h + c over the
// UTF-16 code units of s, wrapping as a 32-bit signed integer. Runes above
// U+FFFF count as their two surrogates.
//
// It duplicates rebalance.JavaStringHash on purpose: fetcher must not import
// rebalance, and zkutil is not the place for Java string semantics.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + hi
			h = 31*h + lo
			continue
		}
		h = 31*h + r
	}
	return h
}
