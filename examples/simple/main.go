// Command simple is the smallest zkconsumer program: one connector, one
// stream, print every message. Run it against the local cluster:
//
//	make cluster-up
//	source .cache/cluster/env
//	go run ./examples/simple -topic orders
//
// It exits cleanly on SIGINT, committing what it printed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
)

func main() {
	zkConnect := flag.String("zookeeper", os.Getenv("ZOOKEEPER_CONNECT"), "ZooKeeper connect string with chroot")
	topic := flag.String("topic", "orders", "topic to consume")
	group := flag.String("group", "simple-example", "consumer group")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	cfg := connector.DefaultConfig()
	cfg.ZookeeperConnect = *zkConnect
	cfg.GroupID = *group
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	c, err := connector.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Shutdown(sctx); err != nil {
			log.Print(err)
		}
	}()

	streams, err := c.CreateMessageStreams(ctx, map[string]int{*topic: 1})
	if err != nil {
		log.Print(err)
		return
	}
	for msg, err := range streams[*topic][0].Messages(ctx) {
		if err != nil {
			log.Print(err) // e.g. a partition error; iteration goes on
			continue
		}
		fmt.Printf("%s-%d@%d: %s\n", msg.Topic, msg.Partition, msg.Offset, msg.Value)
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		log.Print("stream ended")
	}
}
