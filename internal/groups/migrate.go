package groups

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/zkconsumer/zkconsumer/internal/coordinator"
)

// MigrateAction is what a migration does to one partition's Kafka offset.
type MigrateAction int

const (
	// MigrateWrite copies the ZooKeeper offset into Kafka.
	MigrateWrite MigrateAction = iota
	// MigrateUnchanged: Kafka already holds the ZooKeeper offset.
	MigrateUnchanged
	// MigrateKeepKafka: Kafka holds a larger offset than ZooKeeper, as
	// with dual.commit.enabled, where Kafka is written first. Like the old
	// consumer reading dual-committed offsets, the larger one wins: the
	// migration never moves a Kafka offset backwards.
	MigrateKeepKafka
)

// MigrateRow is the migration of one partition.
type MigrateRow struct {
	TopicPartition
	// ZooKeeper is the offset committed under /consumers/<group>/offsets.
	ZooKeeper int64
	// Kafka is the group's offset in Kafka, -1 when it has none. After an
	// executed migration it is the offset read back from Kafka.
	Kafka int64
	// LogEnd is the partition's log-end offset, -1 when unknown.
	LogEnd int64
	// Target is the Kafka offset the migration leaves.
	Target int64
	Action MigrateAction
	// Note explains anything an operator should look at.
	Note string
}

// MigrationInput is what a migration needs to know of the ZooKeeper side
// and of the Kafka side before it writes anything.
type MigrationInput struct {
	// ZooKeeper holds the group's committed offsets in ZooKeeper.
	ZooKeeper map[TopicPartition]int64
	// Kafka holds the group's committed offsets in Kafka.
	Kafka map[TopicPartition]int64
	// LogEnd holds log-end offsets; partitions missing from it show -1.
	LogEnd map[TopicPartition]int64
}

// PlanMigration decides, partition by partition, what copying the
// ZooKeeper offsets into Kafka does. Rows are sorted by topic and
// partition. Planning the result of an executed migration again yields only
// MigrateUnchanged and MigrateKeepKafka rows: the migration is idempotent.
func PlanMigration(in MigrationInput) []MigrateRow {
	rows := make([]MigrateRow, 0, len(in.ZooKeeper))
	for tp, zkOff := range in.ZooKeeper {
		row := MigrateRow{TopicPartition: tp, ZooKeeper: zkOff, Kafka: -1, LogEnd: -1, Target: zkOff}
		if le, ok := in.LogEnd[tp]; ok {
			row.LogEnd = le
		}
		kOff, inKafka := in.Kafka[tp]
		if inKafka {
			row.Kafka = kOff
		}
		switch {
		case inKafka && kOff == zkOff:
			row.Action = MigrateUnchanged
		case inKafka && kOff > zkOff:
			row.Action, row.Target = MigrateKeepKafka, kOff
			row.Note = fmt.Sprintf("Kafka's offset %d is ahead of ZooKeeper's %d (dual commit); kept", kOff, zkOff)
		default:
			row.Action = MigrateWrite
		}
		if row.LogEnd >= 0 && row.Target > row.LogEnd {
			row.Note = joinNote(row.Note, fmt.Sprintf("offset %d is beyond the log-end offset %d; a Kafka consumer will apply its auto.offset.reset", row.Target, row.LogEnd))
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Topic != rows[j].Topic {
			return rows[i].Topic < rows[j].Topic
		}
		return rows[i].Partition < rows[j].Partition
	})
	return rows
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// MigrationWrites are the offsets a plan writes to Kafka.
func MigrationWrites(rows []MigrateRow) map[TopicPartition]int64 {
	out := map[TopicPartition]int64{}
	for _, r := range rows {
		if r.Action == MigrateWrite {
			out[r.TopicPartition] = r.Target
		}
	}
	return out
}

// ErrMigrationMismatch is returned when the offsets read back from Kafka
// after a migration are not the planned ones.
var ErrMigrationMismatch = errors.New("Kafka's offsets after the migration differ from the plan")

// VerifyMigration records the offsets read back from Kafka in rows and
// reports every partition whose offset is not the planned target.
func VerifyMigration(rows []MigrateRow, readBack map[TopicPartition]int64) error {
	var bad []string
	for i := range rows {
		got, ok := readBack[rows[i].TopicPartition]
		if !ok {
			got = -1
		}
		rows[i].Kafka = got
		if got != rows[i].Target {
			bad = append(bad, fmt.Sprintf("%s-%d: want %d, Kafka has %d", rows[i].Topic, rows[i].Partition, rows[i].Target, got))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", ErrMigrationMismatch, strings.Join(bad, ", "))
	}
	return nil
}

// KafkaOffsets is the Kafka side of a migration; *coordinator.Client
// implements it.
type KafkaOffsets interface {
	Describe(ctx context.Context) (coordinator.GroupState, error)
	Fetch(ctx context.Context, tps []TopicPartition) (offsets map[TopicPartition]int64, failed map[TopicPartition]error, err error)
	Commit(ctx context.Context, offsets map[TopicPartition]int64) error
}

var _ KafkaOffsets = (*coordinator.Client)(nil)

// kafkaOffsets reads the Kafka offsets of tps, leaving out partitions
// without one; a partition Kafka cannot answer for fails the migration.
func kafkaOffsets(ctx context.Context, kafka KafkaOffsets, tps []TopicPartition) (map[TopicPartition]int64, error) {
	offs, failed, err := kafka.Fetch(ctx, tps)
	if err != nil {
		return nil, err
	}
	if len(failed) > 0 {
		errs := make([]error, 0, len(failed))
		for _, err := range failed {
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
	for tp, off := range offs {
		if off < 0 {
			delete(offs, tp)
		}
	}
	return offs, nil
}

// Migrate copies zkOffsets, the group's ZooKeeper offsets, into Kafka
// through kafka. It refuses while the Kafka-side group has members. With
// execute false it only plans. With execute true it writes the plan, reads
// every partition back and fails with ErrMigrationMismatch unless Kafka
// holds the planned offsets; the returned rows then show what Kafka holds.
func Migrate(ctx context.Context, kafka KafkaOffsets, zkOffsets, logEnd map[TopicPartition]int64, execute bool) ([]MigrateRow, error) {
	st, err := kafka.Describe(ctx)
	if err != nil {
		return nil, err
	}
	if st.Active() {
		return nil, fmt.Errorf("%w: state %s, %d member(s) %v; stop them before migrating", coordinator.ErrGroupActive, st.State, len(st.Members), st.Members)
	}
	tps := make([]TopicPartition, 0, len(zkOffsets))
	for tp := range zkOffsets {
		tps = append(tps, tp)
	}
	kOffs, err := kafkaOffsets(ctx, kafka, tps)
	if err != nil {
		return nil, err
	}
	rows := PlanMigration(MigrationInput{ZooKeeper: zkOffsets, Kafka: kOffs, LogEnd: logEnd})
	if !execute {
		return rows, nil
	}
	if err := kafka.Commit(ctx, MigrationWrites(rows)); err != nil {
		return rows, err
	}
	back, err := kafkaOffsets(ctx, kafka, tps)
	if err != nil {
		return rows, err
	}
	return rows, VerifyMigration(rows, back)
}
