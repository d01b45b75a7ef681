// Command demo is zkconsumer's main job, end to end: it starts a local
// ZooKeeper and Kafka 3.9 broker (or uses ZOOKEEPER_CONNECT and
// KAFKA_BROKERS), creates a topic, produces messages, and runs a consumer
// group that splits the partitions, rebalancing as a member joins and
// another leaves, then prints the committed offsets and lag per partition.
//
//	make demo
package main

import (
	"context"
	"fmt"
	"log/slog"
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
	"github.com/zkconsumer/zkconsumer/zkutil"
)

const (
	partitions = 6
	batch      = 6000
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func step(format string, args ...any) {
	fmt.Printf("\n==> "+format+"\n", args...)
}

func run(ctx context.Context) error {
	cluster, external, err := testcluster.FromEnv()
	if err != nil {
		return err
	}
	if external {
		step("using the cluster at ZOOKEEPER_CONNECT=%s", cluster.ZKConnect())
	} else {
		step("starting ZooKeeper and a Kafka 3.9 broker (ZooKeeper mode) as local JVMs ...")
		start := time.Now()
		if cluster, err = testcluster.Start(ctx, testcluster.Options{}); err != nil {
			return err
		}
		defer func() {
			step("stopping the cluster")
			if err := cluster.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "demo:", err)
			}
		}()
		fmt.Printf("    up in %s: zookeeper.connect=%s, brokers %s\n", time.Since(start).Round(time.Millisecond),
			cluster.ZKConnect(), strings.Join(cluster.BrokerAddrs(), ","))
	}

	topic := testcluster.UniqueName("demo-orders")
	group := testcluster.UniqueName("demo-group")
	step("creating topic %s with %d partitions and producing %d messages", topic, partitions, batch)
	if err := cluster.CreateTopic(ctx, topic, partitions, 1); err != nil {
		return err
	}
	if _, err := cluster.Produce(ctx, topic, batch, testcluster.ProduceOptions{Partition: -1, ValueSize: 100}); err != nil {
		return err
	}

	seen := &progress{counts: map[string]int{}, seqs: map[int]bool{}}
	step("member A joins group %s with 2 streams", group)
	a, err := startMember(ctx, cluster, group, "A", topic, 2, seen)
	if err != nil {
		return err
	}
	seen.waitFor(ctx, batch/2)

	step("member B joins with 1 stream: the group rebalances")
	b, err := startMember(ctx, cluster, group, "B", topic, 1, seen)
	if err != nil {
		a.stop()
		return err
	}
	if _, err := cluster.Produce(ctx, topic, batch, testcluster.ProduceOptions{Partition: -1, ValueSize: 100, FirstSeq: batch}); err != nil {
		return err
	}
	seen.waitFor(ctx, batch+batch/2)

	step("member A leaves: B takes over every partition")
	a.stop()
	seen.waitFor(ctx, 2*batch)
	b.stop()
	seen.print()

	step("committed offsets and lag of group %s (read back from ZooKeeper)", group)
	return printLag(ctx, cluster, group, topic)
}

// member is one ConsumerConnector of the demo group.
type member struct {
	name string
	conn *connector.ConsumerConnector
	wg   sync.WaitGroup
}

func (m *member) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.conn.Shutdown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
	}
	m.wg.Wait()
	fmt.Printf("    member %s shut down (offsets committed, partitions released)\n", m.name)
}

// listener prints each member's share of every generation.
type listener struct{ name string }

func (l listener) BeforeReleasingPartitions(context.Context, *connector.ConsumerConnector, map[string][]int32, bool) {
}

func (l listener) BeforeStartingFetchers(_ context.Context, c *connector.ConsumerConnector, assignment map[string]map[int32]connector.ConsumerThreadID) {
	var mine []string
	for _, parts := range assignment {
		for p, th := range parts {
			if th.ConsumerID == c.ConsumerID() {
				mine = append(mine, fmt.Sprintf("p%d→stream %d", p, th.Thread))
			}
		}
	}
	slices.Sort(mine)
	fmt.Printf("    member %s owns %d partitions: %s\n", l.name, len(mine), strings.Join(mine, ", "))
}

func startMember(ctx context.Context, cluster *testcluster.Cluster, group, name, topic string, streams int, seen *progress) (*member, error) {
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = cluster.ZKConnect()
	cfg.GroupID = group
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	cfg.AutoCommitInterval = time.Second
	cfg.RebalanceBackoff = 500 * time.Millisecond
	if os.Getenv("DEMO_DEBUG") != "" {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("member", name)
	}
	conn, err := connector.New(cfg, connector.WithRebalanceListener(listener{name}))
	if err != nil {
		return nil, err
	}
	m := &member{name: name, conn: conn}
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
			for msg, err := range s.Messages(ctx) {
				if err != nil {
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

// progress counts what each member consumed.
type progress struct {
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
		line := fmt.Sprintf("    consumed %d distinct messages (A: %d, B: %d)", distinct, p.counts["A"], p.counts["B"])
		p.mu.Unlock()
		fmt.Println(line)
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
	fmt.Printf("    all %d messages consumed: %d deliveries (A: %d, B: %d); %d redelivered around rebalances (at least once)\n",
		len(p.seqs), total, p.counts["A"], p.counts["B"], total-len(p.seqs))
}

func printLag(ctx context.Context, cluster *testcluster.Cluster, group, topic string) error {
	s, err := zkutil.Dial(ctx, zkutil.SessionConfig{Connect: cluster.ZKConnect(), SessionTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer s.Close()
	client, err := sarama.NewClient(cluster.BrokerAddrs(), testcluster.SaramaConfig())
	if err != nil {
		return err
	}
	defer client.Close()
	fmt.Printf("    %-9s %-10s %-14s %s\n", "PARTITION", "COMMITTED", "LOG-END-OFFSET", "LAG")
	for p := int32(0); p < partitions; p++ {
		end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return err
		}
		committed := int64(-1)
		if data, _, err := s.Get(ctx, zkutil.OffsetPath(group, topic, p)); err == nil {
			committed, _ = zkutil.DecodeOffset("", data)
		}
		fmt.Printf("    %-9d %-10d %-14d %d\n", p, committed, end, end-committed)
	}
	return nil
}
