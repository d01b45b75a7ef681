// Package stream is what an application reads: the messages of a
// consumer's streams. It declares nothing of its own; its names are
// aliases of the types of the module's data path, re-exported here, and
// again by package connector, from which an application needs nothing
// else.
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
// from any goroutine. The types being aliases, go doc of this package
// names them but lists neither their fields nor their methods: those are
// documented with the types' declarations, in the module's source.
package stream
