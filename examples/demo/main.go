// Command demo is zkconsumer's main job, end to end: it starts a local
// ZooKeeper and Kafka 3.9 broker (or uses ZOOKEEPER_CONNECT and
// KAFKA_BROKERS), creates a topic, produces messages, and runs a consumer
// group that splits the partitions, rebalancing as a member joins and
// another leaves, then prints the committed offsets and lag per partition.
//
// After every rebalance it prints which partitions each member owns, as the
// member's connector reports them (ConsumerConnector.Assignment). The
// rebalance listener's calls are printed too, but they tell only what
// moves under the default cooperative protocol, so they are not ownership.
//
//	make demo
//	go run ./examples/demo -protocol eager   # Kafka's stop-the-world rebalances
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

const (
	partitions = 6
	batch      = 6000
)

func main() {
	var protocol connector.RebalanceProtocol
	flag.TextVar(&protocol, "protocol", connector.RebalanceCooperative,
		"how members hand partitions over (zkconsumer.rebalance.protocol): cooperative or eager")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, protocol); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, protocol connector.RebalanceProtocol) error {
	d := &demo{out: os.Stdout, protocol: protocol}
	cluster, external, err := testcluster.FromEnv()
	if err != nil {
		return err
	}
	if external {
		d.step("using the cluster at ZOOKEEPER_CONNECT=%s", cluster.ZKConnect())
	} else {
		d.step("starting ZooKeeper and a Kafka 3.9 broker (ZooKeeper mode) as local JVMs ...")
		start := time.Now()
		if cluster, err = testcluster.Start(ctx, testcluster.Options{}); err != nil {
			return err
		}
		defer func() {
			d.step("stopping the cluster")
			if err := cluster.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "demo:", err)
			}
		}()
		d.printf("    up in %s: zookeeper.connect=%s, brokers %s\n", time.Since(start).Round(time.Millisecond),
			cluster.ZKConnect(), strings.Join(cluster.BrokerAddrs(), ","))
	}
	d.cluster = cluster
	return d.run(ctx)
}

// demo is one run of the demo against a cluster.
type demo struct {
	cluster  *testcluster.Cluster
	out      io.Writer
	protocol connector.RebalanceProtocol
	// afterStep, if set, is called after each step's ownership is printed,
	// with the members that are still in the group (the test compares
	// what was printed with the owner nodes in ZooKeeper).
	afterStep func(step int, group, topic string, members []*member)

	mu sync.Mutex // serializes printing
}

func (d *demo) printf(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.out, format, args...)
}

func (d *demo) step(format string, args ...any) {
	d.printf("\n==> "+format+"\n", args...)
}

func (d *demo) run(ctx context.Context) error {
	cluster := d.cluster
	topic := testcluster.UniqueName("demo-orders")
	group := testcluster.UniqueName("demo-group")
	d.step("creating topic %s with %d partitions and producing %d messages", topic, partitions, batch)
	if err := cluster.CreateTopic(ctx, topic, partitions, 1); err != nil {
		return err
	}
	if _, err := cluster.Produce(ctx, topic, batch, testcluster.ProduceOptions{Partition: -1, ValueSize: 100}); err != nil {
		return err
	}

	seen := &progress{d: d, counts: map[string]int{}, seqs: map[int]bool{}}
	d.step("member A joins group %s with 2 streams (%s rebalances)", group, d.protocol)
	if d.protocol == connector.RebalanceEager {
		d.printf("    (\"listener:\" lines are the rebalance listener's calls: with eager rebalances a member releases\n" +
			"     all it owns and starts all it is assigned. \"ownership now\" is what each member owns once the group settles.)\n")
	} else {
		d.printf("    (\"listener:\" lines are the rebalance listener's calls: with cooperative rebalances a member is told\n" +
			"     only what moves. \"ownership now\" is what each member owns once the group settles.)\n")
	}
	a, err := d.startMember(ctx, group, "A", topic, 2, seen)
	if err != nil {
		return err
	}
	defer a.stop() // a no-op once stopped
	d.printOwnership(ctx, 1, group, topic, a)
	seen.waitFor(ctx, batch/2)

	d.step("member B joins with 1 stream: the group rebalances")
	b, err := d.startMember(ctx, group, "B", topic, 1, seen)
	if err != nil {
		return err
	}
	defer b.stop()
	d.printOwnership(ctx, 2, group, topic, a, b)
	if _, err := cluster.Produce(ctx, topic, batch, testcluster.ProduceOptions{Partition: -1, ValueSize: 100, FirstSeq: batch}); err != nil {
		return err
	}
	seen.waitFor(ctx, batch+batch/2)

	d.step("member A leaves: B takes over every partition")
	a.stop()
	d.printOwnership(ctx, 3, group, topic, b)
	seen.waitFor(ctx, 2*batch)
	b.stop()
	seen.print()

	d.step("committed offsets and lag of group %s (read back from ZooKeeper)", group)
	return d.printLag(ctx, group, topic)
}

// member is one ConsumerConnector of the demo group.
type member struct {
	d        *demo
	name     string
	conn     *connector.ConsumerConnector
	wg       sync.WaitGroup
	stopOnce sync.Once

	mu       sync.Mutex
	lastMove time.Time // when the rebalance listener was last called
}

func (m *member) stop() {
	m.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := m.conn.Shutdown(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
		}
		m.wg.Wait()
		m.d.printf("    member %s shut down (offsets committed, partitions released)\n", m.name)
	})
}

func (m *member) moved() {
	m.mu.Lock()
	m.lastMove = time.Now()
	m.mu.Unlock()
}

func (m *member) quietSince() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastMove
}

// BeforeReleasingPartitions prints the partitions the member gives up:
// under the cooperative protocol only those that move to another member
// (or to another of its streams), under eager all it owned.
func (m *member) BeforeReleasingPartitions(_ context.Context, _ *connector.ConsumerConnector, released map[string][]int32, lost bool) {
	m.moved()
	note := ""
	if lost {
		note = " (its ZooKeeper session was lost)"
	}
	m.d.printf("    listener: member %s releases %s%s\n", m.name, partitionNames(released), note)
}

// BeforeStartingFetchers prints the partitions the member gains: under
// the cooperative protocol those that move to it, under eager all it is
// assigned.
func (m *member) BeforeStartingFetchers(_ context.Context, _ *connector.ConsumerConnector, gained map[string][]int32) {
	m.moved()
	m.d.printf("    listener: member %s starts %s\n", m.name, partitionNames(gained))
}

// partitionNames renders partitions by topic as "p0, p1" (the demo has
// one topic).
func partitionNames(byTopic map[string][]int32) string {
	var ps []int32
	for _, parts := range byTopic {
		ps = append(ps, parts...)
	}
	slices.Sort(ps)
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = fmt.Sprintf("p%d", p)
	}
	return strings.Join(names, ", ")
}

// partsAndStreams renders partitions and their streams, by partition:
// "p0→stream 0, p1→stream 1".
func partsAndStreams(streams map[int32]int) string {
	var s []string
	for _, p := range slices.Sorted(maps.Keys(streams)) {
		s = append(s, fmt.Sprintf("p%d→stream %d", p, streams[p]))
	}
	return strings.Join(s, ", ")
}

func (d *demo) startMember(ctx context.Context, group, name, topic string, streams int, seen *progress) (*member, error) {
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = d.cluster.ZKConnect()
	cfg.GroupID = group
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	cfg.AutoCommitInterval = time.Second
	cfg.RebalanceBackoff = 500 * time.Millisecond
	cfg.RebalanceProtocol = d.protocol
	cfg.Logger = slog.New(slog.DiscardHandler) // the demo prints what happens itself
	if os.Getenv("DEMO_DEBUG") != "" {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("member", name)
	}
	m := &member{d: d, name: name}
	conn, err := connector.New(ctx, cfg, connector.WithRebalanceListener(m))
	if err != nil {
		return nil, err
	}
	m.conn = conn
	// Errors the connector reports outside the streams (a failed
	// rebalance, a lost session, a commit that failed): the demo's logger
	// discards them, so they are printed here. The channel closes in
	// Shutdown.
	m.wg.Go(func() {
		for err := range conn.Errors() {
			fmt.Fprintf(os.Stderr, "    member %s: %v\n", name, err)
		}
	})
	ss, err := conn.CreateMessageStreams(ctx, map[string]int{topic: streams})
	if err != nil {
		// ctx may be what ended CreateMessageStreams: Shutdown gets its own.
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = conn.Shutdown(sctx)
		return nil, err
	}
	for _, s := range ss[topic] {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			for {
				msg, err := s.Next(ctx)
				if err != nil {
					if errors.Is(err, connector.ErrShutdown) || ctx.Err() != nil {
						break // the connector was shut down, or ctx ended
					}
					fmt.Fprintf(os.Stderr, "    member %s: %v\n", name, err)
					continue
				}
				seq, _ := testcluster.ParseSeq(msg.Value)
				seen.add(name, seq)
			}
		}()
	}
	return m, nil
}

// settleQuiet is how long no member's listener must have been called for
// the group to count as settled.
const settleQuiet = time.Second

// printOwnership waits until the group has settled (every member owns
// partitions, together every partition exactly once, and no listener was
// called for settleQuiet), or a minute has passed, then prints what each
// member's connector says it owns.
func (d *demo) printOwnership(ctx context.Context, step int, group, topic string, members ...*member) {
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !settled(topic, members) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
	if !settled(topic, members) {
		d.printf("    (the group has not settled after a minute; ownership as each member reports it now)\n")
	}
	d.printf("    ownership now, as each member's connector reports it:\n")
	for _, m := range members {
		d.printf("    %s\n", ownershipLine(m.name, topic, m.conn.Assignment()))
	}
	if d.afterStep != nil {
		d.afterStep(step, group, topic, members)
	}
}

// settled tells whether the members own every partition of topic exactly
// once between them, each some, with no rebalance activity for settleQuiet.
func settled(topic string, members []*member) bool {
	seen := map[int32]bool{}
	for _, m := range members {
		if time.Since(m.quietSince()) < settleQuiet {
			return false
		}
		a := m.conn.Assignment()
		if a.Err != nil || len(a.Partitions[topic]) == 0 {
			return false
		}
		for _, p := range a.Partitions[topic] {
			if seen[p] {
				return false
			}
			seen[p] = true
		}
	}
	return len(seen) == partitions
}

// ownershipLine renders a member's assignment: "member A owns 2
// partitions: p0→stream 0, p1→stream 1".
func ownershipLine(name, topic string, a connector.Assignment) string {
	if a.Err != nil {
		return fmt.Sprintf("member %s owns no partitions: %v", name, a.Err)
	}
	streams := map[int32]int{}
	for tp, stream := range a.Streams {
		if tp.Topic == topic {
			streams[tp.Partition] = stream
		}
	}
	return fmt.Sprintf("member %s owns %d partitions: %s", name, len(streams), partsAndStreams(streams))
}

// progress counts what each member consumed.
type progress struct {
	d      *demo
	mu     sync.Mutex
	counts map[string]int
	seqs   map[int]bool
}

func (p *progress) add(name string, seq int) {
	p.mu.Lock()
	p.counts[name]++
	p.seqs[seq] = true
	p.mu.Unlock()
}

// waitFor prints progress until n distinct messages were consumed.
func (p *progress) waitFor(ctx context.Context, n int) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		p.mu.Lock()
		distinct := len(p.seqs)
		line := fmt.Sprintf("    consumed %d distinct messages (A: %d, B: %d)\n", distinct, p.counts["A"], p.counts["B"])
		p.mu.Unlock()
		p.d.printf("%s", line)
		if distinct >= n {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (p *progress) print() {
	p.mu.Lock()
	defer p.mu.Unlock()
	total := p.counts["A"] + p.counts["B"]
	p.d.printf("    all %d messages consumed: %d deliveries (A: %d, B: %d); %d redelivered around rebalances (at least once)\n",
		len(p.seqs), total, p.counts["A"], p.counts["B"], total-len(p.seqs))
}

func (d *demo) printLag(ctx context.Context, group, topic string) error {
	s, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: d.cluster.ZKConnect(), SessionTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer s.Close()
	client, err := sarama.NewClient(d.cluster.BrokerAddrs(), testcluster.SaramaConfig())
	if err != nil {
		return err
	}
	defer client.Close()
	d.printf("    %-9s %-10s %-14s %s\n", "PARTITION", "COMMITTED", "LOG-END-OFFSET", "LAG")
	for p := int32(0); p < partitions; p++ {
		end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return err
		}
		committed := int64(-1)
		if data, _, err := s.Get(ctx, zkutil.OffsetPath(group, topic, p)); err == nil {
			committed, _ = zkutil.DecodeOffset("", data)
		}
		d.printf("    %-9d %-10d %-14d %d\n", p, committed, end, end-committed)
	}
	return nil
}
