// Package javastr reproduces Java string semantics that Kafka's consumers
// bake into their decisions (String.hashCode, String.compareTo), so that
// Go members decide alike: the Scala consumer's assignors and fetcher ids
// (rebalance, fetcher) and the Java consumer's assignors
// (internal/kafkagroup). It imports only the standard library.
package javastr

import "unicode/utf16"

// Hash returns Java's String.hashCode of s: h = 31*h + c over the UTF-16
// code units of s, wrapping around as a 32-bit signed integer. Runes above
// U+FFFF count as their two surrogates.
//
// s is decoded as UTF-8; each invalid byte counts as U+FFFD, which is what
// Java sees for most malformed input after decoding znode data as UTF-8.
// Kafka topic names are ASCII, where the two agree exactly.
func Hash(s string) int32 {
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
