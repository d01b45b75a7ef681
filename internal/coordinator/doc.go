// Package coordinator is a client of Kafka's group coordinator for one
// consumer group, used from outside the group: it finds the coordinator,
// describes the group, and reads and writes the group's offsets in
// __consumer_offsets the way Kafka's old consumer did with
// offsets.storage=kafka (OffsetFetch v1, OffsetCommit v2 with generation -1
// and no member id). The connector's Kafka offset store and the
// zkconsumer-groups tool's migration both stand on it.
//
// The coordinator accepts commits from outside a group only while the group
// has no members; otherwise it answers ILLEGAL_GENERATION or
// UNKNOWN_MEMBER_ID, reported as ErrGroupActive.
package coordinator
