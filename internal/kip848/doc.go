// Package kip848 encodes and decodes the few Kafka requests that the
// broker-driven consumer group protocol of KIP-848 (group.protocol=consumer)
// needs and that IBM/sarama does not speak: ConsumerGroupHeartbeat (API key
// 68, versions 0 and 1), OffsetCommit version 9 (the first version a
// consumer-protocol member may commit with; sarama stops at 8), and the
// ApiVersions answer that tells whether a broker has them. Conn carries
// them over one connection.
//
// It is our own on purpose: the core module must not pull in a whole
// protocol library (franz-go's kmsg, say) for two messages. Only what the
// member sends and reads is here, written from the message definitions in
// Apache Kafka's clients/src/main/resources/common/message/*.json:
// flexible versions (compact strings and arrays, unsigned varints, tagged
// fields, which are skipped on reading), UUID topic ids.
//
// Decoders read data from the network and treat it as hostile: every
// length is checked against the bytes that remain before anything is
// allocated, so a truncated answer or one that claims a huge string or
// array returns an error wrapping ErrMalformed and never panics nor
// allocates more than the answer's own size. Conn refuses an answer that
// claims more than MaxResponseSize bytes before reading it.
package kip848
