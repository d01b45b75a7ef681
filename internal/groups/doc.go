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
// All errors are package-prefixed sentinels or structs that wrap them, to be
// compared with errors.Is and errors.As.
package groups
