package groups

import (
	"bytes"
	"context"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/coordinator"
)

func TestPlanMigration(t *testing.T) {
	rows := PlanMigration(MigrationInput{
		ZooKeeper: map[TopicPartition]int64{tp("b", 0): 5, tp("a", 1): 7, tp("a", 0): 3, tp("a", 2): 10, tp("a", 3): 9},
		Kafka:     map[TopicPartition]int64{tp("a", 0): 3, tp("a", 1): 2, tp("a", 2): 12},
		LogEnd:    map[TopicPartition]int64{tp("a", 0): 3, tp("a", 1): 8, tp("a", 2): 12, tp("a", 3): 4},
	})
	require.Len(t, rows, 5)
	want := []struct {
		tp     TopicPartition
		kafka  int64
		logEnd int64
		target int64
		action MigrateAction
		note   string
	}{
		{tp("a", 0), 3, 3, 3, MigrateUnchanged, ""},
		{tp("a", 1), 2, 8, 7, MigrateWrite, ""},
		{tp("a", 2), 12, 12, 12, MigrateKeepKafka, "Kafka's offset 12 is ahead of ZooKeeper's 10 (dual commit); kept"},
		{tp("a", 3), -1, 4, 9, MigrateWrite, "offset 9 is beyond the log-end offset 4; a Kafka consumer will apply its auto.offset.reset"},
		{tp("b", 0), -1, -1, 5, MigrateWrite, ""},
	}
	for i, w := range want {
		r := rows[i]
		assert.Equal(t, w.tp, r.TopicPartition, "row %d", i)
		assert.Equal(t, w.kafka, r.Kafka, "%v kafka", w.tp)
		assert.Equal(t, w.logEnd, r.LogEnd, "%v log end", w.tp)
		assert.Equal(t, w.target, r.Target, "%v target", w.tp)
		assert.Equal(t, w.action, r.Action, "%v action", w.tp)
		assert.Equal(t, w.note, r.Note, "%v note", w.tp)
	}
	assert.Equal(t, map[TopicPartition]int64{tp("a", 1): 7, tp("a", 3): 9, tp("b", 0): 5}, MigrationWrites(rows))
}

// fakeKafka is an in-memory coordinator for the planning logic; the real
// one is exercised in the integration tests.
type fakeKafka struct {
	state   coordinator.GroupState
	offsets map[TopicPartition]int64
	commits int
	drop    bool // lose commits, as a broken coordinator would
}

func (f *fakeKafka) Describe(context.Context) (coordinator.GroupState, error) { return f.state, nil }

func (f *fakeKafka) Fetch(_ context.Context, tps []TopicPartition) (map[TopicPartition]int64, map[TopicPartition]error, error) {
	out := map[TopicPartition]int64{}
	for _, tp := range tps {
		out[tp] = -1
		if off, ok := f.offsets[tp]; ok {
			out[tp] = off
		}
	}
	return out, nil, nil
}

func (f *fakeKafka) Commit(_ context.Context, offs map[TopicPartition]int64) error {
	f.commits++
	if !f.drop {
		for tp, off := range offs {
			f.offsets[tp] = off
		}
	}
	return nil
}

func TestMigrateIdempotent(t *testing.T) {
	ctx := context.Background()
	k := &fakeKafka{state: coordinator.GroupState{State: "Dead"}, offsets: map[TopicPartition]int64{tp("t", 1): 40}}
	zk := map[TopicPartition]int64{tp("t", 0): 10, tp("t", 1): 30}

	dry, err := Migrate(ctx, k, zk, nil, false)
	require.NoError(t, err)
	assert.Zero(t, k.commits, "a dry run writes nothing")
	assert.Equal(t, MigrateWrite, dry[0].Action)

	rows, err := Migrate(ctx, k, zk, nil, true)
	require.NoError(t, err)
	assert.Equal(t, int64(10), rows[0].Kafka, "the row shows the offset read back")
	assert.Equal(t, int64(40), rows[1].Kafka, "a Kafka offset ahead of ZooKeeper's is never moved back")
	assert.Equal(t, map[TopicPartition]int64{tp("t", 0): 10, tp("t", 1): 40}, k.offsets)

	again, err := Migrate(ctx, k, zk, nil, true)
	require.NoError(t, err)
	for _, r := range again {
		assert.NotEqual(t, MigrateWrite, r.Action, "a second run has nothing to write: %+v", r)
	}
}

func TestMigrateRefusesActiveKafkaGroup(t *testing.T) {
	k := &fakeKafka{state: coordinator.GroupState{State: "Stable", Members: []string{"consumer-1"}}, offsets: map[TopicPartition]int64{}}
	_, err := Migrate(context.Background(), k, map[TopicPartition]int64{tp("t", 0): 1}, nil, true)
	require.ErrorIs(t, err, coordinator.ErrGroupActive)
	assert.Contains(t, err.Error(), "consumer-1")
	assert.Zero(t, k.commits)
}

func TestMigrateVerifiesReadBack(t *testing.T) {
	k := &fakeKafka{state: coordinator.GroupState{State: "Empty"}, offsets: map[TopicPartition]int64{}, drop: true}
	_, err := Migrate(context.Background(), k, map[TopicPartition]int64{tp("t", 0): 1}, nil, true)
	require.ErrorIs(t, err, ErrMigrationMismatch)
	assert.Contains(t, err.Error(), "t-0: want 1, Kafka has -1")
}

func TestPrintMigration(t *testing.T) {
	rows := PlanMigration(MigrationInput{
		ZooKeeper: map[TopicPartition]int64{tp("orders", 0): 5, tp("orders", 1): 9},
		Kafka:     map[TopicPartition]int64{tp("orders", 1): 12},
		LogEnd:    map[TopicPartition]int64{tp("orders", 0): 20, tp("orders", 1): 20},
	})
	var buf bytes.Buffer
	require.NoError(t, PrintMigration(&buf, "g", rows, false))
	assert.Equal(t, `GROUP  TOPIC   PARTITION  ZOOKEEPER-OFFSET  KAFKA-OFFSET  LOG-END-OFFSET  ACTION
g      orders  0          5                 -             20              write 5
g      orders  1          9                 12            20              keep Kafka's
Note: orders-1: Kafka's offset 12 is ahead of ZooKeeper's 9 (dual commit); kept
`, buf.String())
}
