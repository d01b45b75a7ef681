// Package groups is the library behind cmd/zkconsumer-groups, the
// ZooKeeper-era counterpart of Kafka's kafka-consumer-groups.sh.
//
// This part of the package is pure logic with no I/O of its own:
//
//   - offsets files: [ReadCSV] and [WriteCSV] speak the CSV that
//     kafka-consumer-groups.sh --reset-offsets --export writes and --from-file
//     reads (topic,partition,offset, or group,topic,partition,offset for
//     several groups); [ReadZkOffsets] and [WriteZkOffsets] speak the format of
//     Kafka's old kafka.tools.ExportZkOffsets and ImportZkOffsets (one
//     /consumers/<group>/offsets/<topic>/<partition>:<offset> line per
//     partition); [DetectFormat] tells the two apart. Malformed lines are
//     reported as [*LineError] with 1-based line numbers.
//   - reset plans: a [ResetSpec] names one of the reset scenarios of
//     --reset-offsets (--to-earliest, --to-latest, --to-current, --to-offset,
//     --shift-by, --to-datetime, --by-duration, --from-file);
//     [ParseDatetime] and [ParseISODuration] parse the arguments of the two
//     time-based ones as Kafka does. [PlanReset] turns a spec and what is
//     known of each partition ([PartitionState]) into a deterministic plan,
//     clamping requested offsets into the log as Kafka does and recording
//     every adjustment as a note; [PrintPlan] prints it in Kafka's dry-run
//     layout.
//
// The other part reads and changes groups in ZooKeeper and asks brokers for
// log offsets:
//
//   - [OpenZooKeeper] connects with Kafka's zookeeper.connect string and
//     chroot; [ListGroups], [CheckGroup], [ReadCommittedOffsets],
//     [ReadOwners] and [ListMembers] read /consumers/<group>;
//     [DescribeGroup] puts them together with log end offsets for
//     --describe, and [PrintOffsets], [PrintMembers], [PrintState] print
//     it (the first in Kafka 1.1.1's layout; [PrintOffsetsVerbose] and
//     [PrintMembersVerbose] add the columns of --verbose);
//     [PrintListing] prints --list --state.
//   - [LogOffsets] asks each partition's leader, found through
//     /brokers/topics/<t>/partitions/<p>/state and /brokers/ids, for the
//     earliest, latest and by-time offsets (ListOffsets).
//   - [DeleteGroup], [DeleteGroupTopic] and [DeleteTopicFromGroups] delete
//     as Kafka 1.1.1's --delete did; [ResetGroup] plans and writes a reset.
//   - [DeleteOffsets] deletes a ZooKeeper group's offsets of some topics as
//     Kafka's coordinator handles OffsetDelete, and [DeleteKafkaOffsets]
//     sends OffsetDelete for a group coordinated by Kafka;
//     [PrintOffsetDeletions] prints the outcomes.
//
// Readers never panic on garbage in znodes: they return what they could
// read together with a [*BadNodesError] naming each bad node. Writers refuse
// to touch a group while members are registered ([ErrGroupActive]), except
// [DeleteOffsets], which refuses only the topics they subscribe to
// ([ErrSubscribed]).
//
// All errors are package-prefixed sentinels or structs that wrap them, to be
// compared with errors.Is and errors.As.
package groups
