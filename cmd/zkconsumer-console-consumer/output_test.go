package main

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// recordingWriter keeps every write.
type recordingWriter struct {
	mu     sync.Mutex
	writes []string
	fail   error
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail != nil {
		return 0, w.fail
	}
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func (w *recordingWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.writes)
}

func msg(topic string, p int32, off int64, value string) *connector.Message {
	return &connector.Message{Topic: topic, Partition: p, Offset: off, Value: []byte(value)}
}

func TestOutputCountsOnlyWhatIsWrittenOut(t *testing.T) {
	f, err := newFormatter(nil)
	require.NoError(t, err)
	w := &recordingWriter{}
	out := newOutput(w, true)
	all := map[connector.TopicPartition]bool{{Topic: "a", Partition: 0}: true, {Topic: "a", Partition: 1}: true, {Topic: "b", Partition: 0}: true}

	for i, m := range []*connector.Message{msg("a", 0, 5, "x"), msg("a", 0, 6, "y"), msg("b", 0, 9, "z"), msg("a", 1, 3, "w"), msg("a", 0, 7, "v")} {
		_, err := out.add(m, f, false)
		require.NoError(t, err, "message %d", i)
	}
	// Buffered, then written out by the linger at the latest.
	testwait.WaitFor(t, 5*time.Second, func() bool { return w.count() == 1 }, "one write")
	require.Equal(t, "x\ny\nz\nw\nv\n", w.writes[0])
	require.Equal(t, map[connector.TopicPartition]int64{{Topic: "a", Partition: 0}: 8, {Topic: "a", Partition: 1}: 4, {Topic: "b", Partition: 0}: 10},
		out.writtenOffsets(all))

	// Unread partitions are left out; a message not written out moves
	// nothing.
	w.mu.Lock()
	w.fail = errors.New("broken pipe")
	w.mu.Unlock()
	_, err = out.add(msg("a", 0, 8, "u"), f, false)
	require.NoError(t, err, "still in the buffer")
	select {
	case <-out.Failed():
	case <-time.After(5 * time.Second):
		t.Fatal("the failed write was not noticed")
	}
	_, err = out.add(msg("a", 0, 9, "t"), f, false)
	require.Error(t, err)
	require.Equal(t, map[connector.TopicPartition]int64{{Topic: "a", Partition: 0}: 8}, out.writtenOffsets(map[connector.TopicPartition]bool{{Topic: "a", Partition: 0}: true}))
	require.Error(t, out.close())
}

func TestOutputUnbufferedWritesEachMessage(t *testing.T) {
	f, err := newFormatter(map[string]string{"print.value": "false"})
	require.NoError(t, err)
	w := &recordingWriter{}
	out := newOutput(w, false)
	_, err = out.add(msg("a", 0, 1, "x"), f, false)
	require.NoError(t, err)
	require.Zero(t, w.count(), "nothing to print, nothing written")
	require.Equal(t, map[connector.TopicPartition]int64{{Topic: "a", Partition: 0}: 2},
		out.writtenOffsets(map[connector.TopicPartition]bool{{Topic: "a", Partition: 0}: true}), "yet processed")

	f, err = newFormatter(nil)
	require.NoError(t, err)
	for i := range 3 {
		_, err = out.add(msg("a", 0, int64(2+i), "x"), f, false)
		require.NoError(t, err)
	}
	require.Equal(t, 3, w.count())
	require.NoError(t, out.close())
}

func TestOutputFormatErrors(t *testing.T) {
	f, err := newFormatter(map[string]string{"print.key": "true", "key.deserializer": "org.apache.kafka.common.serialization.IntegerDeserializer"})
	require.NoError(t, err)
	tp := map[connector.TopicPartition]bool{{Topic: "a", Partition: 0}: true}

	// Without skipping, the message does not count as written out; what
	// the formatter printed before failing stays.
	w := &recordingWriter{}
	out := newOutput(w, false)
	m := msg("a", 0, 1, "v")
	m.Key = []byte{1}
	formatErr, writeErr := out.add(m, f, false)
	require.ErrorContains(t, formatErr, "Size of data received by IntegerDeserializer is not 4")
	require.NoError(t, writeErr)
	require.Empty(t, out.writtenOffsets(tp))

	// Skipped, it does.
	formatErr, _ = out.add(m, f, true)
	require.Error(t, formatErr)
	require.Equal(t, map[connector.TopicPartition]int64{{Topic: "a", Partition: 0}: 2}, out.writtenOffsets(tp))
	require.NoError(t, out.close())
	require.Empty(t, w.writes)
}

func TestWithoutNotOwner(t *testing.T) {
	require.NoError(t, withoutNotOwner(nil))
	require.NoError(t, withoutNotOwner(connector.ErrNotOwner))
	other := errors.New("zk down")
	err := withoutNotOwner(errors.Join(connector.ErrNotOwner, other))
	require.ErrorIs(t, err, other)
	require.NotErrorIs(t, err, connector.ErrNotOwner)
}

func TestCommitterForgetsPartitionsThatComeBack(t *testing.T) {
	f, err := newFormatter(nil)
	require.NoError(t, err)
	out := newOutput(&recordingWriter{}, false)
	defer out.close()
	cm := newCommitter(out, connector.DefaultConfig(), io.Discard)
	p0, p1 := connector.TopicPartition{Topic: "a", Partition: 0}, connector.TopicPartition{Topic: "a", Partition: 1}
	both := map[connector.TopicPartition]bool{p0: true, p1: true}
	ctx := t.Context()
	cm.BeforeStartingFetchers(ctx, nil, map[string][]int32{"a": {0, 1}})
	for _, m := range []*connector.Message{msg("a", 0, 10, "x"), msg("a", 1, 20, "y")} {
		_, err := out.add(m, f, false)
		require.NoError(t, err)
	}
	// Eager: generation 2 keeps p0 and loses p1; generation 3 gets p1 back.
	cm.BeforeReleasingPartitions(ctx, nil, map[string][]int32{"a": {0, 1}}, false)
	cm.BeforeStartingFetchers(ctx, nil, map[string][]int32{"a": {0}})
	require.Equal(t, map[connector.TopicPartition]int64{p0: 11, p1: 21}, out.writtenOffsets(both))
	require.Equal(t, map[connector.TopicPartition]bool{p0: true}, cm.owned)
	cm.BeforeReleasingPartitions(ctx, nil, map[string][]int32{"a": {0}}, false)
	cm.BeforeStartingFetchers(ctx, nil, map[string][]int32{"a": {0, 1}})
	require.Equal(t, map[connector.TopicPartition]int64{p0: 11}, out.writtenOffsets(both))
	require.Equal(t, both, cm.owned)
	// Cooperative: p1 moves away alone, p0 stays owned and keeps what was
	// written out of it; p1 comes back later, after another member had it.
	_, err = out.add(msg("a", 1, 30, "z"), f, false)
	require.NoError(t, err)
	cm.BeforeReleasingPartitions(ctx, nil, map[string][]int32{"a": {1}}, false)
	require.Equal(t, map[connector.TopicPartition]bool{p0: true}, cm.owned, "a cooperative release keeps the rest owned")
	require.Equal(t, map[connector.TopicPartition]int64{p0: 11, p1: 31}, out.writtenOffsets(both))
	cm.BeforeStartingFetchers(ctx, nil, map[string][]int32{"b": {0}})
	cm.BeforeStartingFetchers(ctx, nil, map[string][]int32{"a": {1}})
	require.Equal(t, map[connector.TopicPartition]int64{p0: 11}, out.writtenOffsets(both))
	require.Equal(t, map[connector.TopicPartition]bool{p0: true, p1: true, {Topic: "b", Partition: 0}: true}, cm.owned)
}

// shortWriter takes the first n bytes of a write and then fails, as a pipe
// whose reader exits (| head) fails a write it took part of.
type shortWriter struct {
	n   int
	got []byte
}

func (w *shortWriter) Write(p []byte) (int, error) {
	k := min(w.n, len(p))
	w.got = append(w.got, p[:k]...)
	w.n -= k
	if k < len(p) {
		return k, errors.New("broken pipe")
	}
	return k, nil
}

// Issue 19: after `| head -5` closed the pipe, nothing was committed
// although the first write had reached the reader. The messages a failed
// write took whole count as written out; the one it cut counts not.
func TestOutputPartialWriteCountsWholeMessages(t *testing.T) {
	f, err := newFormatter(nil)
	require.NoError(t, err)
	a0, a1, b0 := zkutil.TopicPartition{Topic: "a", Partition: 0}, zkutil.TopicPartition{Topic: "a", Partition: 1}, zkutil.TopicPartition{Topic: "b", Partition: 0}
	all := map[zkutil.TopicPartition]bool{a0: true, a1: true, b0: true}
	msgs := []*connector.Message{msg("a", 0, 5, "xx"), msg("a", 1, 3, "yy"), msg("a", 0, 6, "zz"), msg("b", 0, 9, "ww")}

	for _, tc := range []struct {
		name string
		n    int // bytes the write takes; each message is 3 bytes
		want map[zkutil.TopicPartition]int64
	}{
		{"none", 0, map[zkutil.TopicPartition]int64{}},
		{"cut in the first", 2, map[zkutil.TopicPartition]int64{}},
		{"first whole", 3, map[zkutil.TopicPartition]int64{a0: 6}},
		{"three whole, fourth cut", 10, map[zkutil.TopicPartition]int64{a0: 7, a1: 4}},
		{"all but the last byte", 11, map[zkutil.TopicPartition]int64{a0: 7, a1: 4}},
	} {
		for _, buffered := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/buffered=%v", tc.name, buffered), func(t *testing.T) {
				w := &shortWriter{n: tc.n}
				out := newOutput(w, buffered)
				for _, m := range msgs {
					if _, err := out.add(m, f, false); err != nil {
						break
					}
				}
				_ = out.close()
				select {
				case <-out.Failed():
				default:
					t.Fatal("the short write was not noticed")
				}
				require.Equal(t, tc.want, out.writtenOffsets(all), "reader got %q", w.got)
			})
		}
	}
}
