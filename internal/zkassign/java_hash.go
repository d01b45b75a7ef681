package zkassign

import "github.com/zkconsumer/zkconsumer/internal/javastr"

// javaStringHash returns Java's String.hashCode of s, the hash by which
// the roundrobin assignor orders partitions: h = 31*h + c over the UTF-16
// code units of s with 32-bit wrap-around. Invalid UTF-8 bytes count as
// U+FFFD; Kafka topic names are ASCII, where Go and Java agree exactly.
func javaStringHash(s string) int32 { return javastr.Hash(s) }
