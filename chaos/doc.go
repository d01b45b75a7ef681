// Package chaos is a fault-injection suite for the consumer's safety
// promise: every message the producer had acknowledged is delivered at least
// once, at any moment at most one running member of the group delivers a
// given partition, committed offsets never go backwards, and every message
// delivered twice is delivered twice for a reason the promise allows.
//
// # The run
//
// Run starts a private cluster: a ZooKeeper ensemble of
// Config.ZooKeeperServers servers (three; one for a single server) and
// three Kafka 3.9 brokers in ZooKeeper mode, topics with replication factor
// 3 and min.insync.replicas=2. It creates the topic and starts
// Config.Members member processes. Each member is a "verifying consumer"
// that uses only the public API of package connector: it joins the group
// with two streams (some members statically, the others with a whitelist
// that also matches topics created during the run), reads the streams with
// Next, and appends JSON lines to a log of its own (one file per
// incarnation, see Record): every delivered message with the wall-clock
// time at which Next returned it, the partitions the rebalance listener
// reports as assigned and released, the errors of Errors(), and at exit the
// result of a goroutine-leak check made after Shutdown.
//
// Every member slot reaches the cluster through proxies the driver owns
// (package testcluster's ProxySet): one per ZooKeeper server, listed in the
// slot's zookeeper.connect, and one per broker, to which the member's
// connector.WithDialer sends each connection to that broker's address
// (members learn the brokers' addresses from ZooKeeper or from Kafka's
// metadata, so the dialer is what routes them). The driver cuts a member's
// network by making its proxies blackhole: a real partition, in which bytes
// its sender gives up on are never delivered.
//
// # Topologies
//
// Config.Topology selects what the members run (see Topology):
//
//   - TopologyEnsemble: coordination through ZooKeeper with every server of
//     the ensemble in zookeeper.connect, the range assignor, offsets in
//     ZooKeeper.
//   - TopologyRoundRobin: the same coordination with
//     partition.assignment.strategy=roundrobin, offsets.storage=kafka and
//     dual.commit.enabled=false; every member subscribes with the whitelist.
//   - TopologyKafka: zkconsumer.group.coordination=kafka (offsets in Kafka),
//     static members (group.instance.id=chaos-<slot>), Kafka's range
//     assignor.
//   - TopologySticky: as TopologyEnsemble (half the members with the
//     whitelist, so subscriptions differ) with
//     partition.assignment.strategy=sticky.
//   - TopologyKafkaCooperative: as TopologyKafka with
//     partition.assignment.strategy=cooperative-sticky (KIP-429).
//   - TopologyKafkaConsumer: group.protocol=consumer (KIP-848; offsets in
//     Kafka, the broker assigns) on a KRaft cluster of three Kafka 4 nodes,
//     each a broker and a controller, whose consumer-group session timeout
//     is the members' (Config.SessionTimeout); dynamic members, every one
//     subscribed to the main topic by name.
//
// While a paced producer writes Config.Messages sequence-numbered messages
// with acks=all, the driver injects the faults of a schedule derived from
// Config.Seed (NewSchedule), one after another, each logged with its
// targets and its start and end: members killed with SIGKILL, frozen with
// SIGSTOP past their session (one, or two at once), interrupted with SIGINT,
// each then restarted; a running member cut off every ZooKeeper server or
// every broker, shorter or longer than its session, or cut off ZooKeeper
// until ZooKeeper expires its session (its registration vanishes) and
// healed at once, before it has tried every server; the ensemble's leader or
// a follower killed and restarted, the server a member is connected to
// paused, a majority of the servers paused past the session timeout, a
// follower cut off the other servers while its clients still reach it, the
// whole ensemble paused or restarted; a member cut off ZooKeeper while the
// leader restarts; a member leaving while the broker leading most
// partitions is paused; brokers killed or paused, the group's coordinator
// (as FindCoordinator names it) killed or paused; a static member replaced
// by a new process with the same group.instance.id while the old one still
// runs, the old one then killed or interrupted; partition leaders moved;
// partitions added; new topics created for the wildcard members. The kinds
// of each topology are Topology's; every full run has at least 100 faults.
//
// At the end the driver stops producing, waits (bounded) until every
// acknowledged message has been delivered, checks the final owners (below),
// interrupts every member and waits for clean exits. It then reads the
// committed offsets the store holds, and every commit the store applied
// during the run (below), stops the cluster, and Verify reads the logs and
// Report prints the verdict.
//
// # Committed offsets, observed without gaps
//
// Nothing is sampled. With offsets in ZooKeeper, the driver decodes the
// transaction logs of every server of the ensemble after the run
// (dataDir/version-2/log.*, see DecodeZKTxnLog) and keeps each transaction
// that a majority of the servers logged: ZooKeeper applies a write only once
// a majority has logged it and later truncates only writes that were never
// applied. Every create, setData and delete of an offset node under
// /consumers/<group>/offsets is a commit (CommitRecord), with the session
// that wrote it, the consumer id that session registered, and whether that
// session held the partition's owner node at that moment (owner nodes are
// ephemeral: created by a claim, deleted by a release or with their
// session). With offsets in Kafka, the driver reads __consumer_offsets from
// its first record to its end and decodes every offset commit of the group
// (DecodeOffsetCommit); the topic's segments are made large enough that the
// log cleaner never compacts one during the run, and a partition that does
// not start at offset 0 or skips an offset is a problem. In both cases the
// last observed commit of every partition must equal the committed offset
// the store serves at the end; any difference, or any problem reading,
// fails the run, since a duplicate can only be judged against the commits.
//
// # Definitions used by the verifier
//
// Lost: a message the producer had acknowledged (topic, partition, offset)
// that no member ever delivered.
//
// Committed-offset regression: a commit of a partition applied after
// another one with a larger offset, or a deletion of the committed offset.
// Every regression fails the run: the consumer never commits less than
// what it committed before, whoever owns the partition.
//
// Offset write without the owner node (offsets in ZooKeeper): a commit that
// ZooKeeper applied for a session that did not hold the partition's owner
// node then. It fails the run: a member commits only partitions it owns,
// and a write issued under one session must never be applied under
// another.
//
// Ownership period: for member incarnation X and partition p, the time from
// a BeforeStartingFetchers call that gives p to X up to the next
// BeforeReleasingPartitions call of X that names p (or X's end). A delivery
// belongs to the latest period of X for p that began before it; deliveries
// after a release and before the next assignment stay with the period they
// follow, and are also counted as "delivered outside ownership".
//
// Duplicate: every delivery of a (topic, partition, offset) after the first.
// Each duplicate ("again", by incarnation Y in its period Q) is compared
// with the delivery just before it ("prev", by X in period P). Let the
// takeover be Y's first delivery of the partition in Q: Y started reading
// from the offset committed then. The duplicate is explained only when all
// of these hold:
//
//   - it is not a second delivery within one ownership period (same X and
//     P);
//   - no commit applied before the takeover had passed prev's offset: the
//     message was never committed, so Y was right to read it (otherwise the
//     committed offset went back, or Y started below it: unexplained),
//     unless every commit that had passed it failed at its member (see
//     below);
//   - after an orderly release (P ended with a release whose lost flag is
//     not set), Y did not deliver the partition before that release;
//   - and either every commit applied before the takeover that passed
//     prev's offset failed at its member: "commit failed at the member, the
//     store may still apply it: re-delivery expected (at-least-once)". A
//     commit failed at its member when the member logged a
//     connector.CommitError for that partition and offset (RecCommitFailed)
//     within 2 x the session timeout + 10 s (the longest a member's commit
//     runs) after the store applied it. Kafka's coordinator can append a
//     commit to __consumer_offsets and answer with an error (it timed out
//     waiting for a replica on a broker that died: min.insync.replicas=2),
//     keeping the offset before in its cache; the record becomes durable
//     later, but the group goes on from the offset before. A single commit
//     that passed prev's offset and succeeded at its member keeps the
//     duplicate unexplained;
//   - or P ended in one of these ways:
//     (a) X was killed with SIGKILL (or died on its own, itself a failure
//     reported as an unclean exit) without releasing P: "uncommitted tail";
//     (b) P ended with a release whose lost flag is set: X lost its ZooKeeper
//     session (ZooKeeper coordination) or its group membership (Kafka
//     coordination, including a static member fenced by its replacement):
//     "ownership lost: uncommitted tail";
//     (c) P ended with an orderly release and prev is the last message X
//     delivered in P: the reader had not asked for the next message yet, so
//     it was not consumed and not committed: "in hand at an orderly
//     release";
//     (d) P ended with an orderly release while a fault kept X from its
//     offset store at some moment of the last storeCutWindow (10 s) before
//     the release, so the release's commit could not be made: X cut off
//     ZooKeeper (offsets in ZooKeeper) or off the brokers (offsets in
//     Kafka), the ensemble without quorum or restarting its leader, the
//     server X was connected to paused, restarted or isolated, the group's
//     coordinator killed or paused (offsets in Kafka). Each fault records
//     the incarnations it cut off their store (FaultRecord.StoreCut).
//
// The same rules hold in every topology; what differs is the store the
// commits are read from and what "lost" means in (b). Every other duplicate
// is unexplained and fails the run; it is listed with its reason, the fault
// blamed for it (the latest fault that hit one of the two members, or else
// the latest fault) and the two members involved.
//
// Tenure: within one ownership period, the interval [first delivery, last
// delivery] of p by X, minus the windows in which X was frozen by SIGSTOP
// (a frozen process is not running). A tenure may be a single instant.
//
// Double ownership while running (the primary criterion): per partition,
// the total time during which two tenures of different incarnations
// overlap, plus the number of messages of p that one incarnation delivered
// at an instant lying inside another incarnation's tenure of p. Both must be
// zero. So a member A that delivers p after member B has taken p over and
// delivered it, before A is told of the release, counts, as does a member
// that delivers p after another member's first delivery in a later
// ownership period, and as do the old and the new process of a replaced
// static member delivering the same partitions.
//
// Listener overlap (secondary figure): per partition, the time during which
// the ownership periods of two incarnations overlap, each period cut at the
// incarnation's death and without its SIGSTOP windows. It shows how long a
// member believed it owned partitions that another member had claimed; it is
// reported but not a failure by itself.
//
// Times are wall-clock readings of one machine, taken by the member right
// after Next returns, and, for commits, the store's own clock (ZooKeeper's
// leader, Kafka's coordinator), with millisecond precision: a commit stamped
// in the millisecond of a takeover does not count as before it. A reader
// descheduled between the return and the reading makes its delivery look
// later than it was; the verifier does not correct for that, so it errs
// towards reporting double ownership, never towards hiding it.
//
// The run also fails on panics (a panic record, "panic:" on stderr or exit
// code 2), data races reported by race-enabled members, members that did not
// exit cleanly when interrupted or that exited on their own (except the
// static member a static-replace fault replaced, which must stop once it is
// fenced: its exit record says so), goroutines left running after Shutdown, and
// final owners that differ from the assignor's decision: with ZooKeeper
// coordination, the owner nodes against what the assignor computes for the
// registered members (every registration must record the run's strategy);
// with Kafka coordination, the running members' reported assignments, which
// must cover every subscribed partition exactly once. The sticky assignor
// computes from the group's previous assignment: the check reads the
// group's /consumers/<group>/sticky_assignment node, as the members do,
// gives it as the previous assignment, and also requires that the node
// holds exactly what the assignor computes from it (the members agreed on
// it for the group as it is now), that every owner is a thread of a
// registered member consuming the partition's topic, and that no partition
// could move to a thread consuming its topic that owns at least two fewer
// partitions.
//
// # Why every delivery is written before it can be committed
//
// The consumer counts a message as consumed when the stream is asked for the
// next one, and an automatic commit may follow at once. A member therefore
// pushes its buffered log lines to the kernel before each call to Next
// (and at least every 100 ms): a member killed with SIGKILL never has
// committed an offset whose delivery is missing from its log, which would
// show up as a false loss.
package chaos
