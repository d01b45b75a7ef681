// Package stream is for code that handles a consumer's messages without
// driving a consumer: a library of message handlers, say, that takes a
// *stream.Message and need not import package connector. Applications
// that run a consumer import connector alone, which re-exports the same
// types under the same names; the two names are one type.
//
// What is exported here is deliberate and is the whole consumer side:
// KafkaStream (Kafka's KafkaStream) with Next and MarkConsumed; Message
// with its Header and TimestampType;
// PartitionError; and the errors Next returns. A KafkaStream comes from
// the connector (CreateMessageStreams); nothing here creates one, and
// nothing reachable from one puts a message on it, drops its queued
// messages or moves its offsets past messages the application has not
// seen: the producer side (the fetchers' queue and partition state) and
// the owner's side (clearing and shutting a stream down) live under
// internal/, which the go tool does not let code outside this module
// import.
//
// Delivery is at least once: a message counts as consumed, and so moves
// its partition's consumed offset (what a commit stores) to Offset+1,
// only when the caller asks for the next message on the stream or marks
// it with MarkConsumed. Within a partition messages come in offset order.
// A fetcher's error for one partition comes out of Next as a
// *PartitionError and the stream carries on; ErrShutdown is final.
//
// Next is the one way to read a stream, called from one goroutine at a
// time per stream; MarkConsumed, the one way to mark a message, is safe
// from any goroutine. The types are aliases of the module's data path;
// the doc of each shows the declaration it stands for, fields and methods
// included.
package stream
