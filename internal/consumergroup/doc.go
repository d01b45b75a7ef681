// Package consumergroup makes a consumer a member of a group that uses
// Kafka's consumer group protocol of KIP-848 (group.protocol=consumer,
// Kafka 4.0 and later), in which the broker computes the assignment and
// each member converges on it by heartbeats. The connector drives it as
// it drives package kafkagroup (the classic protocol) when
// zkconsumer.group.coordination=kafka and group.protocol=consumer;
// applications reach its errors through connector's (ErrGroupFatal,
// ErrMembershipLost).
//
// A Member joins with epoch 0 and then heartbeats (ConsumerGroupHeartbeat)
// at the interval the coordinator gives, telling the coordinator its
// subscription (topic names or a regex), group.remote.assignor if set, and the
// partitions it owns. The coordinator answers with the member epoch and,
// when it changed, the partitions the member may own now, by topic id
// (names come from Metadata v10). The assignment is incremental: the
// coordinator never gives a partition to a member before its previous
// owner has said, in a heartbeat, that it no longer owns it, or was fenced.
//
// Each Join yields a Generation, which lasts as long as the membership:
// the epoch, the member id, the partitions owned when it started, and a
// context that ends with a cause, as kafkagroup's do. Within it the
// assignment changes incrementally: when the coordinator's assignment
// (Member.Target) differs from what the member owns, Generation.Updates
// signals. The caller then stops and commits the partitions the target
// leaves out, starts those it adds, and calls Member.Acknowledge with the
// target, which heartbeats at once: only then does the coordinator give
// the revoked partitions to another member. Partitions kept stay owned
// throughout. The causes that end a generation:
//
//   - ErrMembershipLost: the coordinator fenced the member
//     (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID), no heartbeat succeeded
//     for the session timeout, or Leave was called. Commit nothing, drop
//     what is buffered, Join: it joins again with epoch 0.
//   - ErrFatal: the member cannot go on (authorization, refused
//     credentials or certificates: secure.ErrAuthentication, an
//     unsupported assignor, a broker without the protocol:
//     ErrUnsupported).
//   - ErrMemberClosed: Close was called.
//   - ErrRebalanceStarted: Join was called while the generation ran (the
//     caller gave it up; it still owns its partitions until the next
//     heartbeat says otherwise).
//
// Commits use OffsetCommit version 9 with the member id and the member's
// latest epoch (the coordinator bumps the epoch without a new assignment
// too, so a generation spans several epochs); the coordinator refuses
// older versions and other epochs from a consumer-protocol member. Each
// generation has a lease (Generation.LeaseHeld), renewed by every
// heartbeat answered without error while the generation lasts, for
// LeaseFraction of min(session timeout, rebalance timeout) from when the
// heartbeat was sent, except while a revocation is pending (the
// coordinator's rebalance timer then runs from its request). In this
// protocol the broker owns the session timeout
// (group.consumer.session.timeout.ms), so Config.SessionTimeout must not
// exceed it, and should well exceed the broker's heartbeat interval.
//
// Close leaves the group with epoch -1 (-2 for a static member, which
// the coordinator keeps for its session timeout). Every goroutine a
// Member starts (the heartbeat of the current generation) is ended by the
// next Join, Leave or Close. The encoding of the requests sarama lacks is
// in internal/kip848, whose connections speak the TLS and SASL (PLAIN,
// SCRAM-SHA-256/512, OAUTHBEARER) that Config.Secure gives sarama's
// (internal/coordinator's Dialer); a refusal of the credentials or the
// certificates ends Join with an ErrFatal error naming the setting to
// fix.
//
// A subscription is topic names (Config.Topics) or a regex that the
// coordinator evaluates itself (Config.TopicRegex, ConsumerGroupHeartbeat
// version 1, Kafka 4.0 and later): it compiles it with RE2/J, matches it
// against the whole name of every topic the member may describe, internal
// topics included, and assigns the partitions of those it matches; it
// looks again when topics are created. The member learns the names of the
// assigned topics from their ids (Metadata of every topic).
package consumergroup
