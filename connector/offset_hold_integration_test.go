package connector

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// offsetsOf returns, per partition, the offsets the collector saw.
func offsetsOf(rs []record) map[int32][]int64 {
	out := map[int32][]int64{}
	for _, r := range rs {
		out[r.Partition] = append(out[r.Partition], r.Offset)
	}
	for p := range out {
		slices.Sort(out[p])
	}
	return out
}

// waitOffsets waits until the collector has seen offsets from..to-1 of
// partition p, each at least once.
func waitOffsets(t *testing.T, col *collector, p int32, from, to int64, timeout time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool {
		seen := map[int64]bool{}
		for _, r := range col.snapshot() {
			if r.Partition == p {
				seen[r.Offset] = true
			}
		}
		for o := from; o < to; o++ {
			if !seen[o] {
				return false
			}
		}
		return true
	}, timeout, 50*time.Millisecond, "partition %d offsets %d..%d never all arrived", p, from, to-1)
}

// heldErrorFor reports whether err is the held-partition error of
// partition p whose offset node holds value.
func heldErrorFor(err error, group, topic string, p int32, value string) bool {
	var pe *streamcore.PartitionError
	var de *zkutil.DecodeError
	return errors.As(err, &pe) && pe.Topic == topic && pe.Partition == p &&
		errors.Is(err, ErrOffsetUnreadable) && errors.As(err, &de) &&
		de.Path == zkutil.OffsetPath(group, topic, p) && strings.Contains(err.Error(), value)
}

// generationOf returns the connector's current generation id, 0 without
// one.
func generationOf(c *ConsumerConnector) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == nil {
		return 0
	}
	return int(c.gen.id)
}

// TestUnreadableOffsetHoldsOnlyItsPartition: garbage in the offset nodes of
// two partitions is reported (on Errors and through the streams, naming the
// node and the value), those two partitions are held while the others are
// consumed in a stable generation, the garbage is not overwritten, and each
// starts as soon as an operator repairs its node (from the repaired offset)
// or deletes it (from auto.offset.reset). A member that gains a partition
// in a later rebalance and finds garbage holds it the same way.
func TestUnreadableOffsetHoldsOnlyItsPartition(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	const perPartition = 100
	topic := newTopic(t, c, 4, 4*perPartition)
	group := testcluster.UniqueName("g-held")
	ctx := testwait.Context(t, 4*time.Minute)
	admin, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
	require.NoError(t, err)
	defer admin.Close()
	path := func(p int32) string { return zkutil.OffsetPath(group, topic, p) }
	require.NoError(t, admin.SetOrCreate(ctx, path(1), []byte("abc")))
	require.NoError(t, admin.SetOrCreate(ctx, path(2), []byte("-7")))

	cfg := testConfig(c, group)
	conn := newConnector(t, cfg)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 2})
	require.NoError(t, err)
	col := newCollector()
	for i, s := range streams[topic] {
		col.read(ctx, fmt.Sprintf("s%d", i), s)
	}

	// The readable partitions are consumed.
	waitOffsets(t, col, 0, 0, perPartition, 2*time.Minute)
	waitOffsets(t, col, 3, 0, perPartition, 2*time.Minute)

	// Both unreadable partitions are reported on Errors...
	reported := map[int32]bool{}
	deadline := time.After(time.Minute)
	for !reported[1] || !reported[2] {
		select {
		case err := <-conn.Errors():
			switch {
			case heldErrorFor(err, group, topic, 1, `"abc"`):
				reported[1] = true
			case heldErrorFor(err, group, topic, 2, "-7"):
				reported[2] = true
			default:
				t.Logf("other error: %v", err)
			}
		case <-deadline:
			t.Fatalf("held partitions not reported on Errors: %v", reported)
		}
	}
	// ...and through the streams that own them.
	require.Eventually(t, func() bool {
		col.mu.Lock()
		defer col.mu.Unlock()
		var one, two bool
		for _, err := range col.errs {
			one = one || heldErrorFor(err, group, topic, 1, `"abc"`)
			two = two || heldErrorFor(err, group, topic, 2, "-7")
		}
		return one && two
	}, time.Minute, 50*time.Millisecond, "held partitions not reported through their streams")

	// The generation is stable, nothing of the held partitions is read, and
	// their nodes keep the garbage (nothing was committed from a guess).
	gen := generationOf(conn)
	require.NotZero(t, gen)
	time.Sleep(4 * cfg.RebalanceBackoff)
	require.Equal(t, gen, generationOf(conn), "the member rebalanced again")
	got := offsetsOf(col.snapshot())
	require.Empty(t, got[1], "partition 1 was consumed from a guessed offset")
	require.Empty(t, got[2], "partition 2 was consumed from a guessed offset")
	for p, want := range map[int32]string{1: "abc", 2: "-7"} {
		data, _, err := admin.Get(ctx, path(p))
		require.NoError(t, err)
		require.Equal(t, want, string(data), "the offset node of partition %d was overwritten", p)
	}

	// An operator repairs one node and deletes the other: both start, the
	// first at the repaired offset, the second by auto.offset.reset
	// (smallest), in the same generation.
	require.NoError(t, admin.SetOrCreate(ctx, path(1), []byte("30")))
	require.NoError(t, admin.Delete(ctx, path(2), -1))
	waitOffsets(t, col, 1, 30, perPartition, time.Minute)
	waitOffsets(t, col, 2, 0, perPartition, time.Minute)
	got = offsetsOf(col.snapshot())
	require.Equal(t, int64(30), got[1][0], "partition 1 started below its repaired offset")
	require.Equal(t, gen, generationOf(conn), "resuming needed a rebalance")
	require.Eventually(t, func() bool {
		offs := readOffsets(t, c, group, topic, 4)
		return offs[0] == perPartition && offs[1] == perPartition && offs[2] == perPartition && offs[3] == perPartition
	}, time.Minute, 100*time.Millisecond, "everything consumed is committed")

	// Garbage found at a rebalance: partition 3 is fully consumed and
	// committed, then its node is broken and a second member joins, which
	// gains partition 3 (range: the first member's two streams keep 0, 1
	// and 2). Its new owner holds it; the rest keeps flowing.
	require.NoError(t, admin.SetOrCreate(ctx, path(3), []byte("zzz")))
	second := newConnector(t, cfg)
	streams2, err := second.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col.read(ctx, "second", streams2[topic][0])
	waitOwners(t, c, group, topic, 4, 2)
	_, err = c.Produce(ctx, topic, 40, testcluster.ProduceOptions{Partition: -1, FirstSeq: 4 * perPartition})
	require.NoError(t, err)
	for _, p := range []int32{0, 1, 2} {
		waitOffsets(t, col, p, perPartition, perPartition+10, time.Minute)
	}
	time.Sleep(2 * cfg.RebalanceBackoff)
	require.NotContains(t, offsetsOf(col.snapshot())[3], int64(perPartition), "partition 3 consumed despite its broken offset")
	data, _, err := admin.Get(ctx, path(3))
	require.NoError(t, err)
	require.Equal(t, "zzz", string(data))
	require.Eventually(t, func() bool {
		col.mu.Lock()
		defer col.mu.Unlock()
		for _, err := range col.errs {
			if heldErrorFor(err, group, topic, 3, `"zzz"`) {
				return true
			}
		}
		return false
	}, time.Minute, 50*time.Millisecond, "partition 3 not reported as held by its new owner after the rebalance")
	require.NoError(t, admin.SetOrCreate(ctx, path(3), []byte("100")))
	waitOffsets(t, col, 3, perPartition, perPartition+10, time.Minute)
	require.Zero(t, countBelow(col.snapshot(), 1, 30), "partition 1 read below its repaired offset")
}

// countBelow counts the records of partition p below offset off.
func countBelow(rs []record, p int32, off int64) int {
	n := 0
	for _, r := range rs {
		if r.Partition == p && r.Offset < off {
			n++
		}
	}
	return n
}
