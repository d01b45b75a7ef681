// Package kafkagroup makes a consumer a member of a group coordinated by
// Kafka's broker, so that zkconsumer members and Kafka's Java consumers
// can share one group, in either group protocol (Config.Protocol): the
// classic one (JoinGroup and SyncGroup, protocol type "consumer") or
// KIP-848's consumer protocol (Kafka 4.0 and later). The connector drives
// it when zkconsumer.group.coordination=kafka; applications reach its
// errors through connector (ErrMembershipLost, ErrGroupFatal,
// ErrCommitFenced, ErrTopicAuthorizationFailed).
//
// One Member type serves both protocols, with one lifecycle: it finds the
// coordinator and keeps its connections (link.go), runs one heartbeat
// goroutine on a connection of its own whose answers one verdict table
// handles (heartbeat.go), reports failures with one throttle (report.go),
// commits, fetches, leaves and closes in one order (offsets.go,
// member.go), and ends Generations with the same causes. What differs is
// a protocol part that encodes and decodes its requests and keeps its
// state, and owns no goroutine: classic (classic*.go) and consumer
// (consumer*.go). The classic leader assigns with the Java consumer's
// assignors (assign_java.go, assign_cooperative_sticky.go), pure functions
// of the group's subscriptions, checked against Kafka 3.9's own.
//
// Under the consumer protocol the member heartbeats
// (ConsumerGroupHeartbeat) at the interval the coordinator gives, telling
// it its subscription (topic names, or a regex the coordinator evaluates
// with RE2/J: Config.TopicRegex), group.remote.assignor if set, and the
// partitions it owns; the coordinator answers with the member epoch and,
// when it changed, the partitions the member may own now, by topic id
// (names come from Metadata v10). The assignment is incremental: a
// generation lasts as long as the membership, Generation.Updates signals
// a new target (Member.Target), and the caller stops and commits what it
// leaves out, starts what it adds, and calls Member.Acknowledge. The
// coordinator never gives a partition to a member before its previous
// owner has said, in a heartbeat, that it no longer owns it, or was
// fenced. Commits use OffsetCommit v9 with the member id and the latest
// epoch. The broker owns the session timeout
// (group.consumer.session.timeout.ms), which each Join reads.
//
// The rest of this comment describes the classic protocol. A Member finds the group's coordinator, joins (JoinGroup, with the
// member id the coordinator assigns since KIP-394, and a group.instance.id
// for static membership when the broker speaks JoinGroup v5), and, when
// the coordinator elects it leader, computes every member's assignment
// with the Java-compatible assignor the group agreed on ("range",
// "roundrobin" or "cooperative-sticky": rangeAssignor, roundRobinAssignor,
// cooperativeStickyAssignor), reading partition counts from a Metadata
// request.
// SyncGroup hands out the assignment; subscriptions and assignments are
// encoded as Java's ConsumerProtocol encodes them (subscription v3, as
// Kafka 3.9 sends it). Only the leader learns the whole group's assignment
// (Generation.GroupAssignment).
//
// A member that lists only cooperative assignors (Config.Assignors:
// "cooperative-sticky") runs Kafka's cooperative protocol (KIP-429),
// as Java's consumer does: a generation that ends with ErrRebalanceStarted
// keeps its partitions while the member rejoins, Join reports them as
// owned, and the next generation continues it (Generation.Cooperative,
// Generation.Continues); the member gives up only the partitions its new
// assignment leaves out, then joins again at once. A list with an eager
// assignor too keeps the member eager whichever assignor is picked.
//
// Every member checks, every MetadataMaxAge, the partition counts of its
// own subscription (the leader also those of every topic of the group)
// and the topics its wildcard matches, and rejoins when they changed.
// JoinGroup is sent at version 9 when the coordinator speaks it (Kafka
// 3.2 and later; our own encoding, internal/kip848, as sarama stops at
// 8; over the TLS and SASL of the other connections), else at 5 or
// below with sarama's: at 9, a static leader that restarted within its
// session is told it leads but must skip the assignment (KIP-814's
// SkipAssignment, Generation.SkippedAssignment), and watches every topic
// of the group as a leader, which Java's followers do not; below 9 it
// comes back as a follower, and the others' own checks are what notices
// new partitions of their topics. The versions of every request are
// negotiated with the coordinator when the member connects
// (internal/coordinator.Negotiate); a coordinator that speaks none of
// the versions of a request the member sends is an ErrFatal error naming
// the broker and the request.
//
// A member that cannot join or stay in its group says why. Join retries
// what may pass (an unreachable broker or coordinator, a coordinator
// that cannot be found, a coordinator still loading the group), and
// reports such failures to Config.OnError, with their cause, once they
// have lasted a few seconds, then at most every 30 seconds; so are
// failing heartbeats and metadata checks, and subscribed topics the
// brokers refuse to describe (ErrTopicAuthorizationFailed). When Join's
// context ends, its error wraps the context's cause and the last failure.
// What retrying cannot mend fails Join at once with an ErrFatal error:
// a connection the brokers refused to authenticate or whose TLS handshake
// failed (secure.ErrAuthentication), with the setting to fix, among
// others below.
//
// Each successful join yields a Generation: its id, the member id, this
// member's partitions, and a context that is cancelled, with a cause, when
// the generation ends:
//
//   - ErrRebalanceStarted: the group is rebalancing (a heartbeat answered
//     REBALANCE_IN_PROGRESS), or this member must rejoin because a
//     subscribed topic grew or its wildcard matches other topics now. The
//     member still belongs to the generation: stop the work, commit with
//     Member.Commit, then call Member.Join again, within the rebalance
//     timeout. Heartbeats continue meanwhile.
//   - ErrMembershipLost: the coordinator no longer counts this member in
//     the generation (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, or no
//     successful heartbeat for session.timeout.ms). Other members may own
//     the partitions already: commit nothing, drop what is buffered, Join.
//   - ErrFatal (wrapping FENCED_INSTANCE_ID or GROUP_AUTHORIZATION_FAILED,
//     or a heartbeat's connection refused by authentication): the member
//     cannot continue; Join returns an ErrFatal error too.
//   - ErrMemberClosed: Close was called.
//
// This is the shape of the ZooKeeper generation of package rebalance (a
// generation owns its work and ends with a cause), so that the connector
// can drive both alike. Commits carry the generation id and member id, so
// the coordinator refuses the commit of a member that lost its membership:
// Commit then returns an error wrapping ErrCommitFenced, and the
// generation ends as the refusal says (a fenced static instance learns it
// from its commit as from its heartbeat). Commit gives up after a few
// tries; CommitFinal, for the commit on revoke and on close, retries every
// retriable error, finding the coordinator again, until its context ends,
// as Java's consumer does.
//
// Each generation has a lease (Generation.LeaseHeld): it holds while the
// coordinator answered, as a member of the generation, a request sent less
// than leaseFraction of min(session timeout, rebalance timeout) ago, so it
// ends before the coordinator can give the partitions to another member,
// also in a process that was frozen. The connector hands out a message
// only while it holds. One case escapes the coordinator's timers: a static
// member's JoinGroup without a member id replaces the live instance with
// the same group.instance.id at once. So a static member that joined
// without a member id (a new process, or after UNKNOWN_MEMBER_ID) holds
// no lease before Generation.HoldUntil, leaseFraction of the term after
// that join, when the replaced instance's lease has ended, assuming that
// instance runs with the same session and rebalance timeouts. Leave takes
// the member out of the group without closing it, as Java's consumer does
// after max.poll.interval.ms.
//
// Every goroutine a Member starts (the heartbeat and the metadata check of
// the current generation) is owned and ended by Join or Close; Close
// leaves the group (dynamic members only, as Java's consumer does), is
// idempotent and bounded. It leaves also after a Join whose context ended
// while the coordinator held its JoinGroup, so that a join given up
// leaves no member behind.
package kafkagroup
