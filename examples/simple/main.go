// Command simple is the smallest zkconsumer program: one connector, one
// stream, print every message. Run it against the local cluster:
//
//	make cluster-up
//	source .cache/cluster/env
//	go run ./examples/simple -topic orders
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
	topic := flag.String("topic", "orders", "topic to consume")
	group := flag.String("group", "simple-example", "consumer group")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *zkConnect, *topic, *group)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, zkConnect, topic, group string) (err error) {
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = zkConnect
	cfg.GroupID = group
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	c, err := connector.New(ctx, cfg)
	if err != nil {
		return err
	}
	// Errors reports what the application should know about, such as a
	// topic that does not exist: print it. The channel is closed by Shutdown.
	var errorsDone sync.WaitGroup
	errorsDone.Go(func() {
		for err := range c.Errors() {
			log.Print("consumer: ", err)
		}
	})
	defer func() {
		// Leaving the group commits what was printed.
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = errors.Join(err, c.Shutdown(sctx))
		errorsDone.Wait()
	}()

	streams, err := c.CreateMessageStreams(ctx, map[string]int{topic: 1})
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted while joining the group
		}
		return err
	}
	for {
		msg, err := streams[topic][0].Next(ctx)
		if err != nil {
			if errors.Is(err, connector.ErrShutdown) || ctx.Err() != nil {
				break // the connector was shut down, or ctx ended
			}
			log.Print(err) // e.g. a partition error; iteration goes on
			continue
		}
		fmt.Printf("%s-%d@%d: %s\n", msg.Topic, msg.Partition, msg.Offset, msg.Value)
	}
	return nil
}
