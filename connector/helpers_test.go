package connector

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

const childEnv = "ZKCONSUMER_TEST_CHILD_CONNECTOR"

// record is one message as a test consumer saw it.
type record struct {
	Consumer  string
	Partition int32
	Offset    int64
	Seq       int
	At        time.Time // when Next handed the message out
}

// collector reads streams in the background and records every message.
type collector struct {
	mu      sync.Mutex
	records []record
	errs    []error
	wg      sync.WaitGroup
	changed chan struct{}
}

func newCollector() *collector { return &collector{changed: make(chan struct{}, 1)} }

func (c *collector) add(r record) {
	c.mu.Lock()
	c.records = append(c.records, r)
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// read consumes s until ctx ends or the stream shuts down.
func (c *collector) read(ctx context.Context, name string, s *streamcore.KafkaStream) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			msg, err := s.Next(ctx)
			if err != nil {
				if errors.Is(err, ErrShutdown) || ctx.Err() != nil {
					break
				}
				c.mu.Lock()
				c.errs = append(c.errs, err)
				c.mu.Unlock()
				continue
			}
			at := time.Now()
			seq, err := testcluster.ParseSeq(msg.Value)
			if err != nil {
				c.mu.Lock()
				c.errs = append(c.errs, err)
				c.mu.Unlock()
				continue
			}
			c.add(record{Consumer: name, Partition: msg.Partition, Offset: msg.Offset, Seq: seq, At: at})
		}
	}()
}

func (c *collector) snapshot() []record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]record(nil), c.records...)
}

// distinct counts distinct sequence numbers seen.
func distinct(rs []record) map[int]int {
	out := map[int]int{}
	for _, r := range rs {
		out[r.Seq]++
	}
	return out
}

// waitAll waits until every sequence number first..first+n-1 was seen.
func (c *collector) waitAll(t *testing.T, first, n int, timeout time.Duration) []record {
	t.Helper()
	deadline := time.After(timeout)
	for {
		rs := c.snapshot()
		seen := distinct(rs)
		missing := 0
		for i := first; i < first+n; i++ {
			if seen[i] == 0 {
				missing++
			}
		}
		if missing == 0 {
			return rs
		}
		select {
		case <-c.changed:
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			c.mu.Lock()
			errs := c.errs
			c.mu.Unlock()
			t.Fatalf("%d of %d messages never arrived (errors: %v)", missing, n, errs)
		}
	}
}

// checkOrder asserts that each consumer saw each partition's offsets in
// ascending order.
func checkOrder(t *testing.T, rs []record) {
	t.Helper()
	last := map[string]int64{}
	for _, r := range rs {
		k := fmt.Sprintf("%s/%d", r.Consumer, r.Partition)
		if prev, ok := last[k]; ok {
			require.Greater(t, r.Offset, prev, "consumer %s, partition %d out of order", r.Consumer, r.Partition)
		}
		last[k] = r.Offset
	}
}

func testConfig(c *testcluster.Cluster, group string) Config {
	cfg := DefaultConfig()
	cfg.ZooKeeperConnect = c.ZKConnect()
	cfg.GroupID = group
	cfg.AutoOffsetReset = AutoOffsetResetSmallest
	cfg.ZooKeeperSessionTimeout = 4 * time.Second
	cfg.RebalanceBackoff = 500 * time.Millisecond
	cfg.RebalanceMaxRetries = 20
	cfg.AutoCommitInterval = 200 * time.Millisecond
	return cfg
}

func newConnector(t *testing.T, cfg Config, opts ...Option) *ConsumerConnector {
	t.Helper()
	c, err := New(t.Context(), cfg, opts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, c.Shutdown(ctx))
	})
	return c
}

// newTopic creates a topic with partitions and n messages of 64 bytes
// spread over them.
func newTopic(t *testing.T, c *testcluster.Cluster, partitions int32, n int) string {
	t.Helper()
	return testcluster.NewTopic(t, c, testcluster.TopicSpec{Prefix: "conn", Partitions: partitions, Messages: n})
}

// readOffsets reads the group's committed ZooKeeper offsets of topic.
func readOffsets(t *testing.T, c *testcluster.Cluster, group, topic string, partitions int32) map[int32]int64 {
	t.Helper()
	s, err := zksession.Dial(context.Background(), zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
	require.NoError(t, err)
	defer s.Close()
	// The members wrote through whichever server they are connected to.
	require.NoError(t, s.Sync(context.Background(), zkutil.OffsetsTopicPath(group, topic)))
	out := map[int32]int64{}
	for p := int32(0); p < partitions; p++ {
		data, _, err := s.Get(context.Background(), zkutil.OffsetPath(group, topic, p))
		if err != nil {
			continue
		}
		off, err := zkutil.DecodeOffset("", data)
		require.NoError(t, err)
		out[p] = off
	}
	return out
}

// childSpec is what a connector in another OS process runs.
type childSpec struct {
	Name    string            `json:"name"`
	Props   map[string]string `json:"props"`
	Topic   string            `json:"topic"`
	Streams int               `json:"streams"`
}

// runChild consumes as one member in its own process, printing
// "<partition> <offset> <seq> <unix nanos>" per message, until stdin
// closes.
func runChild() int {
	var spec childSpec
	if _, err := testcluster.SelfSpec(childEnv, &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg, _, err := ConfigFromProperties(spec.Props)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	c, err := New(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := c.CreateMessageStreams(ctx, map[string]int{spec.Topic: spec.Streams})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, "ready")
	out.Flush()
	var wg sync.WaitGroup
	for _, s := range m[spec.Topic] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				msg, err := s.Next(ctx)
				if err != nil {
					if errors.Is(err, ErrShutdown) || ctx.Err() != nil {
						break
					}
					continue
				}
				at := time.Now()
				seq, _ := testcluster.ParseSeq(msg.Value)
				mu.Lock()
				fmt.Fprintf(out, "%d %d %d %d\n", msg.Partition, msg.Offset, seq, at.UnixNano())
				out.Flush()
				mu.Unlock()
			}
		}()
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer scancel()
	err = c.Shutdown(sctx)
	cancel()
	wg.Wait()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// child is a connector running in another OS process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	name  string
	done  chan struct{}
}

func startChild(t *testing.T, col *collector, spec childSpec) *child {
	t.Helper()
	p := testcluster.StartSelf(t, childEnv, spec)
	cmd, stdout := p.Cmd, p.Stdout
	ch := &child{cmd: cmd, stdin: p.Stdin, name: spec.Name, done: make(chan struct{})}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-ch.done
	})
	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan(), "child %s did not start", spec.Name)
	require.Equal(t, "ready", lines.Text())
	go func() {
		defer close(ch.done)
		for lines.Scan() {
			var r record
			var at int64
			if _, err := fmt.Sscan(lines.Text(), &r.Partition, &r.Offset, &r.Seq, &at); err == nil {
				r.Consumer, r.At = spec.Name, time.Unix(0, at)
				col.add(r)
			}
		}
		_ = cmd.Wait()
	}()
	return ch
}

// leave shuts the child's connector down and waits for it to exit.
func (ch *child) leave(t *testing.T) {
	require.NoError(t, ch.stdin.Close())
	select {
	case <-ch.done:
	case <-time.After(time.Minute):
		t.Fatalf("child %s did not exit", ch.name)
	}
	require.Equal(t, 0, ch.cmd.ProcessState.ExitCode(), "child %s exit code", ch.name)
}

// partitionsByConsumer groups the partitions each consumer read.
func partitionsByConsumer(rs []record) map[string][]int32 {
	sets := map[string]map[int32]bool{}
	for _, r := range rs {
		if sets[r.Consumer] == nil {
			sets[r.Consumer] = map[int32]bool{}
		}
		sets[r.Consumer][r.Partition] = true
	}
	out := map[string][]int32{}
	for c, set := range sets {
		for p := range set {
			out[c] = append(out[c], p)
		}
		sort.Slice(out[c], func(i, j int) bool { return out[c][i] < out[c][j] })
	}
	return out
}

func props(cfg Config) map[string]string { return cfg.Properties() }

// fetchKafkaOffsets reads the group's offsets from Kafka's group coordinator.
func fetchKafkaOffsets(t *testing.T, c *testcluster.Cluster, group, topic string, partitions int32) map[int32]int64 {
	t.Helper()
	client, err := sarama.NewClient(c.BrokerAddrs(), testcluster.SaramaConfig())
	require.NoError(t, err)
	defer client.Close()
	coord, err := client.Coordinator(group)
	require.NoError(t, err)
	req := &sarama.OffsetFetchRequest{Version: 1, ConsumerGroup: group}
	for p := int32(0); p < partitions; p++ {
		req.AddPartition(topic, p)
	}
	resp, err := coord.FetchOffset(req)
	require.NoError(t, err)
	out := map[int32]int64{}
	for p := int32(0); p < partitions; p++ {
		if b := resp.GetBlock(topic, p); b != nil && b.Offset >= 0 {
			out[p] = b.Offset
		}
	}
	return out
}
