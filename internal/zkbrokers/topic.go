package zkbrokers

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/zkconsumer/zkconsumer/internal/zkjson"
)

// NoLeader is the leader of a partition that has none (Kafka's
// LeaderAndIsr.NoLeader, -1).
const NoLeader int32 = -1

// DecodeTopicPartitions parses the replica assignment of topic stored at
// path (/brokers/topics/<topic>), such as
//
//	{"version":1,"partitions":{"0":[1,2],"1":[2,3]}}
//
// and returns the replicas of each partition. Keys other than "partitions"
// (version, and the adding_replicas, removing_replicas and topic_id of Kafka
// 2.x and 3.x) are ignored. Partition numbers are read the way Java's
// Integer.parseInt reads them and must not be negative; replica lists must
// be arrays of integers. A missing "partitions" is an error (Scala would
// see a topic without partitions).
func DecodeTopicPartitions(topic, path string, data []byte) (map[int32][]int32, error) {
	m, err := decodeTopicPartitions(data)
	if err != nil {
		return nil, decodeError(path, fmt.Errorf("topic %q: %w", topic, err))
	}
	return m, nil
}

func decodeTopicPartitions(data []byte) (map[int32][]int32, error) {
	obj, err := zkjson.ParseObject(data)
	if err != nil {
		return nil, err
	}
	raw, ok := obj["partitions"]
	if !ok {
		return nil, errors.New(`no "partitions"`)
	}
	parts, err := zkjson.Object(raw)
	if err != nil {
		return nil, fmt.Errorf("partitions: %w", err)
	}
	out := make(map[int32][]int32, len(parts))
	for key, rawReplicas := range parts {
		p, err := strconv.ParseInt(key, 10, 32)
		if err != nil || p < 0 {
			return nil, fmt.Errorf("partition %q is not a non-negative 32-bit integer", key)
		}
		if _, dup := out[int32(p)]; dup {
			return nil, fmt.Errorf("partition %d is listed twice", p)
		}
		replicas, err := zkjson.Int32Array(rawReplicas)
		if err != nil {
			return nil, fmt.Errorf("replicas of partition %d: %w", p, err)
		}
		out[int32(p)] = replicas
	}
	return out, nil
}

// SortedPartitions returns the partitions of m in ascending order, the
// order in which assignors hand them out.
func SortedPartitions(m map[int32][]int32) []int32 {
	return slices.Sorted(maps.Keys(m))
}

// PartitionState is the leader and in-sync replicas of a partition, stored
// by the controller at /brokers/topics/<topic>/partitions/<p>/state. The
// consumer does not need it (leaders come from metadata requests); Kafka's
// tools read it.
type PartitionState struct {
	// Leader is the broker id of the leader, or NoLeader.
	Leader int32
	// LeaderEpoch counts leader changes.
	LeaderEpoch int32
	// ISR lists the in-sync replicas.
	ISR []int32
	// ControllerEpoch is the epoch of the controller that wrote the state.
	ControllerEpoch int32
}

// DecodePartitionState parses the partition state stored at path, such as
//
//	{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5,"isr":[1,2]}
//
// "leader", "leader_epoch", "isr" and "controller_epoch" are required, as in
// Kafka; other keys are ignored. A leader below NoLeader is an error.
func DecodePartitionState(path string, data []byte) (PartitionState, error) {
	s, err := decodePartitionState(data)
	if err != nil {
		return PartitionState{}, decodeError(path, err)
	}
	return s, nil
}

func decodePartitionState(data []byte) (PartitionState, error) {
	obj, err := zkjson.ParseObject(data)
	if err != nil {
		return PartitionState{}, err
	}
	var s PartitionState
	for _, f := range []struct {
		key string
		dst *int32
	}{
		{"leader", &s.Leader},
		{"leader_epoch", &s.LeaderEpoch},
		{"controller_epoch", &s.ControllerEpoch},
	} {
		raw, ok := obj[f.key]
		if !ok {
			return PartitionState{}, fmt.Errorf("partition state has no %q", f.key)
		}
		if *f.dst, err = zkjson.Int32(raw); err != nil {
			return PartitionState{}, fmt.Errorf("%s: %w", f.key, err)
		}
	}
	if s.Leader < NoLeader {
		return PartitionState{}, fmt.Errorf("leader %d is not a broker id", s.Leader)
	}
	raw, ok := obj["isr"]
	if !ok {
		return PartitionState{}, errors.New(`partition state has no "isr"`)
	}
	if s.ISR, err = zkjson.Int32Array(raw); err != nil {
		return PartitionState{}, fmt.Errorf("isr: %w", err)
	}
	return s, nil
}
