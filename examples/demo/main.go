// Command demo is zkconsumer's main job, end to end: it starts a local
// ZooKeeper and Kafka 3.9 broker (or uses ZOOKEEPER_CONNECT/KAFKA_BROKERS),
// creates a topic, produces messages and reads back from ZooKeeper what the
// brokers registered, printing each step.
//
//	make demo
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkconsumer/zkconsumer/internal/testcluster"
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
	fmt.Printf("==> "+format+"\n", args...)
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
		cluster, err = testcluster.Start(ctx, testcluster.Options{})
		if err != nil {
			return err
		}
		defer func() {
			step("stopping the cluster")
			if err := cluster.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "demo:", err)
			}
		}()
		step("cluster up in %s: zookeeper.connect=%s, brokers %s", time.Since(start).Round(time.Millisecond),
			cluster.ZKConnect(), strings.Join(cluster.BrokerAddrs(), ","))
	}

	topic := testcluster.UniqueName("demo")
	step("creating topic %s with 4 partitions", topic)
	if err := cluster.CreateTopic(ctx, topic, 4, 1); err != nil {
		return err
	}
	step("producing 1000 messages")
	produced, err := cluster.Produce(ctx, topic, 1000, testcluster.ProduceOptions{Partition: -1, ValueSize: 100})
	if err != nil {
		return err
	}
	parts := make([]int32, 0, len(produced.Offsets))
	for p := range produced.Offsets {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	for _, p := range parts {
		o := produced.Offsets[p]
		fmt.Printf("    partition %d: %d messages, offsets %d..%d\n", p, len(o), o[0], o[len(o)-1])
	}

	step("reading what the brokers registered in ZooKeeper under %s", cluster.Chroot())
	conn, _, err := zk.Connect([]string{cluster.ZKServer()}, 10*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		return err
	}
	defer conn.Close()
	ids, _, err := conn.Children(cluster.Chroot() + "/brokers/ids")
	if err != nil {
		return fmt.Errorf("list brokers: %w", err)
	}
	sort.Strings(ids)
	for _, id := range ids {
		data, _, err := conn.Get(cluster.Chroot() + "/brokers/ids/" + id)
		if err != nil {
			return err
		}
		fmt.Printf("    /brokers/ids/%s = %s\n", id, data)
	}
	data, _, err := conn.Get(cluster.Chroot() + "/brokers/topics/" + topic)
	if err != nil {
		return err
	}
	fmt.Printf("    /brokers/topics/%s = %s\n", topic, data)
	step("done")
	return nil
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}
