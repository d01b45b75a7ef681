// Package coordinator is the one client of Kafka's group coordinator that
// every user of it goes through: the Kafka-coordinated member
// (internal/kafkagroup, in either group protocol), the connector's Kafka offset store in
// ZooKeeper mode, and the zkconsumer-groups tool (describe, reset, the
// migration to Kafka). Its pieces:
//
//   - Locator finds the group's coordinator (FindCoordinator), asking
//     one broker of the cluster at a time and moving on to the next after
//     a failure; the members also send their Metadata requests through
//     it.
//   - Negotiate chooses the version of every request from the broker's
//     ApiVersions answer, in one place: the highest both speak within
//     what the caller needs (Need). A broker too old, too new (Kafka 4.0
//     dropped old versions) or without the API fails with an
//     *UnsupportedError naming the broker and the API, before anything
//     is sent.
//   - Retry is the one retry rule: Kafka errors sorted by
//     internal/grouperr (Retriable), lost connections repeated, errors
//     marked Permanent not; Moved tells when to find the coordinator
//     again.
//   - ReadOffsets reads every OffsetFetch answer alike: "no offset",
//     coordinator errors (of the whole answer or, below version 2, of a
//     partition) and errors of single partitions; internal/offsetfetch
//     confirms an answer of "none".
//   - Dialer dials the coordinator for internal/kip848's connections as
//     sarama would (proxy dialer, TLS, SASL with sarama's settings).
//
// The members keep their own state machines (JoinGroup and SyncGroup, or
// ConsumerGroupHeartbeat epochs) and their own connections to the
// coordinator, which they open with these pieces: JoinGroup and
// SyncGroup wait for the whole group, so a classic member keeps them off
// the connection its heartbeats and commits use.
//
// Client is the coordinator client of one group used from outside the
// group: it keeps one connection to the coordinator, describes the group,
// and reads and writes the group's offsets in __consumer_offsets the way
// Kafka's old consumer did with offsets.storage=kafka (OffsetFetch v1,
// OffsetCommit v2 with generation -1 and no member id). The coordinator
// accepts commits from outside a group only while the group has no
// members; otherwise it answers ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID,
// reported as ErrGroupActive.
package coordinator
