// Package chaos is a fault-injection suite for the consumer's safety
// promise: every message the producer had acknowledged is delivered at least
// once, and at any moment at most one running member of the group delivers a
// given partition.
//
// # The run
//
// Run starts a private cluster (ZooKeeper and three Kafka brokers; topics
// with replication factor 3 and min.insync.replicas=2), creates the topic,
// and starts Config.Members member processes. Each member is a "verifying
// consumer" that uses only the public API of package connector: it joins
// the group with two streams (some members statically, the others with a
// whitelist that also matches topics created during the run), reads the
// streams with Next, and appends JSON lines to a log of its own (one file
// per incarnation, see Record): every delivered message with the wall-clock
// time at which Next returned it, the partitions the rebalance listener
// reports as assigned and released, the errors of Errors(), and at exit the
// result of a goroutine-leak check made after Shutdown.
//
// While a paced producer writes Config.Messages sequence-numbered messages
// with acks=all, the driver injects the faults of a schedule derived from
// Config.Seed (NewSchedule): members killed with SIGKILL, frozen with SIGSTOP
// past their ZooKeeper session, or interrupted with SIGINT, each then
// restarted; ZooKeeper paused briefly or long, or killed and restarted;
// brokers killed or paused; partition leaders moved; partitions added; new
// topics created for the wildcard members. Every fault is logged with its
// target and its start and end times. At the end the driver stops
// producing, waits (bounded) until every acknowledged message has been
// delivered, compares the owners in ZooKeeper with what the assignor
// computes for the registered members, interrupts every member and waits for
// clean exits. Verify then reads the logs and Report prints the verdict.
//
// # Definitions used by the verifier
//
// Lost: a message the producer had acknowledged (topic, partition, offset)
// that no member ever delivered.
//
// Duplicate: every delivery of a (topic, partition, offset) after the first.
// Each duplicate is compared with the delivery just before it, by member
// incarnation X at time t, in X's ownership period P (defined below). It is
// explained when
//
//   - P ended without an orderly hand-over (X was killed with SIGKILL, or
//     P ended with a release whose lost flag was set: the session was lost)
//     and the message lies in X's uncommitted tail: its offset is at or
//     beyond the last offset of the partition committed (as the driver
//     observed the offsets in ZooKeeper, offsets.jsonl) before another
//     member took the partition over, that is, before the first delivery
//     of it by another incarnation after P began. Without any observed
//     commit it falls back to time: t >= s - (auto.commit.interval +
//     Config.CommitSlack), where s is the kill, or the start of the latest
//     fault during P that could cut X off ZooKeeper (X's own SIGSTOP, a
//     ZooKeeper pause or restart), or the release; or
//   - P ended with an orderly release and the message is the last one X
//     delivered in P: X had not asked for the next message yet, so the
//     message was not consumed and its offset not committed.
//
// Every other duplicate is unexplained and listed with the fault blamed for
// it (the latest fault that hit one of the two members, or else the latest
// fault) and the two members involved. Unexplained duplicates are reported
// but are not a failure: at-least-once delivery allows them.
//
// Ownership period: for member incarnation X and partition p, the time from
// a BeforeStartingFetchers call whose assignment gives p to X up to the next
// BeforeReleasingPartitions call of X that names p (or X's end). A delivery
// belongs to the latest period of X for p that began before it; deliveries
// after a release and before the next assignment stay with the period they
// follow, and are also counted as "delivered outside ownership".
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
// ownership period.
//
// Listener overlap (secondary figure): per partition, the time during which
// the ownership periods of two incarnations overlap, each period cut at the
// incarnation's death and without its SIGSTOP windows. It shows how long a
// member believed it owned partitions that another member had claimed; it is
// reported but not a failure by itself.
//
// Times are wall-clock readings of one machine, taken by the member right
// after Next returns. A reader descheduled between the return and the
// reading makes its delivery look later than it was; the verifier does not
// correct for that, so it errs towards reporting double ownership, never
// towards hiding it.
//
// The run also fails on panics (a panic record, "panic:" on stderr or exit
// code 2), data races reported by race-enabled members, members that did not
// exit cleanly when interrupted, goroutines left running after Shutdown, and
// final owners in ZooKeeper that differ from the assignor's decision.
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
