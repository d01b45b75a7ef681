package fetch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// LogEnds reads the log ends of the partitions being fetched from their
// leader, paused ones included, while nobody reads the streams (the
// fetchers are blocked); an ended context fails Read at once; after Close
// it reports ErrClosed.
func TestIntegrationLogEnds(t *testing.T) {
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := newTopic(t, c, "log-ends", 3, 1)
	for p := range int32(3) {
		produce(ctx, t, c, topic, 20*int(p+1), testcluster.ProduceOptions{Partition: p, ValueSize: 100})
	}
	m := newManager(t, testConfig(t), clusterBrokers(c))
	l := NewLogEnds(m)
	defer l.Close()

	got, err := l.Read(ctx)
	if err != nil || len(got) != 0 {
		t.Fatalf("before StartConnections: %v, %v; want nothing", got, err)
	}

	// Small fetches into a queue of one chunk nobody reads.
	s, ctl := newStreamControl(t, 1)
	streams := []*streamcore.KafkaStream{s}
	infos := infosFor(topic, 3, streams, 0, 512)
	infos[2].Pause()
	if err := m.StartConnections(ctx, infos); err != nil {
		t.Fatal(err)
	}
	defer m.StopConnections()
	want := map[zkutil.TopicPartition]int64{}
	for p := range int32(3) {
		want[zkutil.TopicPartition{Topic: topic, Partition: p}] = 20 * int64(p+1)
	}
	testwait.WaitFor(t, 30*time.Second, func() bool {
		got, err = l.Read(ctx)
		return err == nil && len(got) == len(want)
	}, "every partition's log end")
	for tp, off := range want {
		if got[tp] != off {
			t.Errorf("%s: log end %d, want %d", tp, got[tp], off)
		}
	}
	// The log grows; the blocked fetcher does not see it, Read does.
	testwait.WaitFor(t, 30*time.Second, func() bool {
		return ctl.Queue().Len() == 1 && infos[0].HighWatermark() == 20 && infos[1].HighWatermark() == 40
	}, "the fetcher to block on the full queue")
	time.Sleep(200 * time.Millisecond) // more than a fetch round trip
	produce(ctx, t, c, topic, 30, testcluster.ProduceOptions{Partition: 0, ValueSize: 100})
	if got, err = l.Read(ctx); err != nil || got[zkutil.TopicPartition{Topic: topic, Partition: 0}] != 50 {
		t.Errorf("after 30 more: %v, %v; want partition 0 at 50", got, err)
	}
	if hw := infos[0].HighWatermark(); hw != 20 {
		t.Errorf("the fetcher's high watermark is %d, want 20 (it is blocked)", hw)
	}

	ended, cancelEnded := context.WithCancel(ctx)
	cancelEnded()
	start := time.Now()
	if _, err := l.Read(ended); !errors.Is(err, context.Canceled) {
		t.Errorf("Read with an ended context: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Read with an ended context took %v", d)
	}

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Read(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v, want ErrClosed", err)
	}
}
