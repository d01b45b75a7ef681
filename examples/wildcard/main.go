// Command wildcard consumes every topic matching a regex, including topics
// created after it started.
//
//	go run ./examples/wildcard -whitelist 'orders.*'
package main

import (
	"context"
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
	whitelist := flag.String("whitelist", "orders.*", "regex of topics to consume (whole-name match)")
	group := flag.String("group", "wildcard-example", "consumer group")
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
		_ = c.Shutdown(sctx)
	}()
	streams, err := c.CreateMessageStreamsByFilter(ctx, connector.Whitelist(*whitelist), 1)
	if err != nil {
		log.Print(err)
		return
	}
	for msg, err := range streams[0].Messages(ctx) {
		if err != nil {
			log.Print(err)
			continue
		}
		fmt.Printf("%s-%d@%d: %s\n", msg.Topic, msg.Partition, msg.Offset, msg.Value)
	}
}
