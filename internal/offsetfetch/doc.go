// Package offsetfetch holds what both of the module's clients of Kafka's
// OffsetFetch do with an answer of "no committed offset": the
// Kafka-coordinated member (internal/kafkagroup) and the out-of-group
// offset client (internal/coordinator, offsets.storage=kafka in ZooKeeper
// mode) confirm it with a second OffsetFetch (Confirmed).
//
// Kafka's group coordinator checks that it coordinates the group and then
// reads the group's offsets; a coordinator that resigns between the two
// (its group unloaded during a coordinator move) answers "no committed
// offset", without an error, for a group that has offsets. Taken at face
// value, the partition's new owner starts from auto.offset.reset or from
// its own older progress, and delivers again what the previous owner had
// consumed and committed (the chaos suite saw 849 such duplicates).
package offsetfetch
