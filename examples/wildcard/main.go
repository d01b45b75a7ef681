// Command wildcard consumes every topic matching a regex, including topics
// created after it started, and prints every message:
//
//	go run ./examples/wildcard -zookeeper 127.0.0.1:2181/kafka -whitelist 'orders.*'
//
// It exits cleanly on SIGINT or SIGTERM, committing what it printed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
)

func main() {
	zkConnect := flag.String("zookeeper", os.Getenv("ZOOKEEPER_CONNECT"), "ZooKeeper connect string with chroot")
	whitelist := flag.String("whitelist", "orders.*", "regex of topics to consume (whole-name match)")
	group := flag.String("group", "wildcard-example", "consumer group")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *zkConnect, *whitelist, *group)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, zkConnect, whitelist, group string) (err error) {
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = zkConnect
	cfg.GroupID = group
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	c, err := connector.New(ctx, cfg)
	if err != nil {
		return err
	}
	// Errors reports what the application should know about, such as
	// unreadable group data in ZooKeeper: print it. The channel is closed
	// by Shutdown.
	var errorsDone sync.WaitGroup
	errorsDone.Go(func() {
		for err := range c.Errors() {
			log.Print("consumer: ", err)
		}
	})
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = errors.Join(err, c.Shutdown(sctx))
		errorsDone.Wait()
	}()
	streams, err := c.CreateMessageStreamsByFilter(ctx, connector.Whitelist(whitelist), 1)
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted while joining the group
		}
		return err
	}
	for {
		msg, err := streams[0].Next(ctx)
		if err != nil {
			if errors.Is(err, connector.ErrShutdown) || ctx.Err() != nil {
				break // the connector was shut down, or ctx ended
			}
			log.Print(err)
			continue
		}
		fmt.Printf("%s-%d@%d: %s\n", msg.Topic, msg.Partition, msg.Offset, msg.Value)
	}
	return nil
}
