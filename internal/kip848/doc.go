// Package kip848 encodes and decodes the few Kafka requests that
// zkconsumer's group members need and that IBM/sarama does not speak:
// ConsumerGroupHeartbeat (API key 68, versions 0 and 1) and OffsetCommit
// version 9 for the broker-driven consumer group protocol of KIP-848
// (group.protocol=consumer; sarama stops at OffsetCommit 8), JoinGroup
// version 9 for the classic protocol (its answer carries KIP-814's
// SkipAssignment, which tells a restarted static leader that it leads
// without having to assign; sarama stops at JoinGroup 8), and the
// ApiVersions answer that tells whether a broker has them. Conn carries
// them over one connection, which Authenticate can first authenticate
// with SASL (SaslHandshake v1, SaslAuthenticate v0; the mechanisms
// themselves are the caller's, SASLMechanism).
//
// It is our own on purpose: the core module must not pull in a whole
// protocol library (franz-go's kmsg, say) for a handful of messages, and sarama's
// request types cannot be extended from outside (their encoders are
// unexported). Only what the members send and read is here, written from
// the message definitions in Apache Kafka's
// clients/src/main/resources/common/message/*.json: flexible versions
// (compact strings, bytes and arrays, unsigned varints, tagged fields,
// which are skipped on reading), UUID topic ids.
//
// Decoders read data from the network and treat it as hostile: every
// length is checked against the bytes that remain before anything is
// allocated, so a truncated answer or one that claims a huge string or
// array returns an error wrapping ErrMalformed and never panics nor
// allocates more than the answer's own size. Conn refuses an answer that
// claims more than MaxResponseSize bytes before reading it.
package kip848
