package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/IBM/sarama"
)

// offsetsTopic is Kafka's internal topic of committed offsets.
const offsetsTopic = "__consumer_offsets"

// OffsetCommitEntry is a decoded offset-commit record of __consumer_offsets:
// the key (group, topic, partition) and the value (the committed offset and
// the coordinator's commit time), or a tombstone (Deleted).
type OffsetCommitEntry struct {
	Group     string
	Topic     string
	Partition int32
	Offset    int64
	// CommitTime is the coordinator's clock when it took the commit, Unix
	// milliseconds.
	CommitTime int64
	Deleted    bool
}

// errNotOffsetCommit marks a record of __consumer_offsets that is not an
// offset commit (group metadata, say): it is skipped.
var errNotOffsetCommit = errors.New("chaos: not an offset commit record")

// DecodeOffsetCommit decodes a record of __consumer_offsets. Keys of version
// 0 and 1 are offset commits (group, topic and partition); version 2 is
// group metadata, for which it returns errNotOffsetCommit. A nil value is a
// tombstone. Values of versions 0 to 3 are fixed layouts (offset; from v3 the
// leader epoch; metadata; commit timestamp; in v1 an expire timestamp);
// version 4 and up are the flexible layout of the same fields.
func DecodeOffsetCommit(key, value []byte) (OffsetCommitEntry, error) {
	var e OffsetCommitEntry
	k := &beReader{b: key}
	kv := k.int16()
	if k.err != nil {
		return e, fmt.Errorf("chaos: offset commit key: %w", k.err)
	}
	if kv != 0 && kv != 1 {
		return e, errNotOffsetCommit
	}
	e.Group, e.Topic, e.Partition = k.str(), k.str(), k.int32()
	if k.err != nil {
		return e, fmt.Errorf("chaos: offset commit key: %w", k.err)
	}
	if value == nil {
		e.Offset, e.Deleted = -1, true
		return e, nil
	}
	v := &beReader{b: value}
	vv := v.int16()
	switch {
	case v.err != nil:
	case vv < 0:
		v.err = fmt.Errorf("value version %d", vv)
	case vv <= 3:
		e.Offset = v.int64()
		if vv == 3 {
			_ = v.int32() // leader epoch
		}
		_ = v.str() // metadata
		e.CommitTime = v.int64()
		if vv == 1 {
			_ = v.int64() // expire timestamp
		}
	default:
		e.Offset = v.int64()
		_ = v.int32()      // leader epoch
		_ = v.compactStr() // metadata
		e.CommitTime = v.int64()
	}
	if v.err != nil {
		return e, fmt.Errorf("chaos: offset commit value of %s/%s-%d: %w", e.Group, e.Topic, e.Partition, v.err)
	}
	return e, nil
}

// readKafkaCommits reads __consumer_offsets from its first record to its
// end and returns the commits of group in log order (a group's records all
// live in one partition of the topic). It fails when a partition does not
// start at offset 0 or skips an offset: records were removed (compaction,
// retention) and commits could have been missed.
func readKafkaCommits(ctx context.Context, addrs []string, group string, conf *sarama.Config) ([]CommitRecord, CommitObservation, error) {
	obs := CommitObservation{Store: storeKafka}
	client, err := sarama.NewClient(addrs, conf)
	if err != nil {
		return nil, obs, fmt.Errorf("chaos: read %s: %w", offsetsTopic, err)
	}
	defer client.Close()
	parts, err := client.Partitions(offsetsTopic)
	if err != nil {
		return nil, obs, fmt.Errorf("chaos: read %s: %w", offsetsTopic, err)
	}
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return nil, obs, err
	}
	defer consumer.Close()
	var out []CommitRecord
	for _, p := range parts {
		oldest, err := client.GetOffset(offsetsTopic, p, sarama.OffsetOldest)
		if err != nil {
			return nil, obs, fmt.Errorf("chaos: %s-%d: oldest offset: %w", offsetsTopic, p, err)
		}
		end, err := client.GetOffset(offsetsTopic, p, sarama.OffsetNewest)
		if err != nil {
			return nil, obs, fmt.Errorf("chaos: %s-%d: end offset: %w", offsetsTopic, p, err)
		}
		obs.Source = append(obs.Source, fmt.Sprintf("%s-%d [%d, %d)", offsetsTopic, p, oldest, end))
		if oldest != 0 {
			obs.Problems = append(obs.Problems, fmt.Sprintf("%s-%d starts at offset %d: earlier records were removed", offsetsTopic, p, oldest))
		}
		if end <= oldest {
			continue
		}
		commits, n, problems, err := consumeOffsetsPartition(ctx, consumer, p, oldest, end, group)
		if err != nil {
			return nil, obs, err
		}
		obs.Entries += n
		obs.Problems = append(obs.Problems, problems...)
		out = append(out, commits...)
	}
	slices.SortStableFunc(out, func(a, b CommitRecord) int { return cmpInt64(a.Order, b.Order) })
	obs.Commits = len(out)
	return out, obs, nil
}

// consumeOffsetsPartition reads partition p of __consumer_offsets over
// [from, end) and keeps the commits of group.
func consumeOffsetsPartition(ctx context.Context, consumer sarama.Consumer, p int32, from, end int64, group string) (commits []CommitRecord, n int, problems []string, err error) {
	pc, err := consumer.ConsumePartition(offsetsTopic, p, from)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("chaos: consume %s-%d: %w", offsetsTopic, p, err)
	}
	defer pc.Close()
	next := from
	idle := time.NewTimer(time.Minute)
	defer idle.Stop()
	for next < end {
		select {
		case <-ctx.Done():
			return nil, n, problems, ctx.Err()
		case <-idle.C:
			return nil, n, problems, fmt.Errorf("chaos: %s-%d: no record for a minute at offset %d of %d", offsetsTopic, p, next, end)
		case cerr := <-pc.Errors():
			return nil, n, problems, fmt.Errorf("chaos: consume %s-%d: %w", offsetsTopic, p, cerr)
		case m := <-pc.Messages():
			idle.Reset(time.Minute)
			if m.Offset != next && len(problems) < 10 {
				problems = append(problems, fmt.Sprintf("%s-%d: offsets %d to %d missing", offsetsTopic, p, next, m.Offset-1))
			}
			next = m.Offset + 1
			n++
			e, err := DecodeOffsetCommit(m.Key, m.Value)
			if errors.Is(err, errNotOffsetCommit) {
				continue
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s-%d@%d: %v", offsetsTopic, p, m.Offset, err))
				continue
			}
			if e.Group != group {
				continue
			}
			t := e.CommitTime
			if e.Deleted {
				t = m.Timestamp.UnixMilli()
			}
			commits = append(commits, CommitRecord{Store: storeKafka, Order: m.Offset, Time: t * int64(time.Millisecond),
				Topic: e.Topic, Partition: e.Partition, Offset: e.Offset, Deleted: e.Deleted})
		}
	}
	return commits, n, problems, nil
}
