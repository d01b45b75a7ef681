// Command workers consumes one topic with several streams, each read by its
// own worker goroutine, as a member of a group: start it twice and the two
// processes split the partitions; stop one and the other takes them over.
//
//	go run ./examples/workers -zookeeper 127.0.0.1:2181/kafka -topic orders -streams 4
//
// It logs its progress every two seconds and exits cleanly on SIGINT or
// SIGTERM: the workers finish, then leaving the group commits what they
// consumed.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
)

func main() {
	zkConnect := flag.String("zookeeper", os.Getenv("ZOOKEEPER_CONNECT"), "ZooKeeper connect string with chroot")
	topic := flag.String("topic", "orders", "topic to consume")
	group := flag.String("group", "workers-example", "consumer group")
	streams := flag.Int("streams", 4, "streams (worker goroutines) in this process")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *zkConnect, *topic, *group, *streams)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, zkConnect, topic, group string, streams int) (err error) {
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = zkConnect
	cfg.GroupID = group
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	cfg.AutoCommitInterval = 5 * time.Second
	cfg.Logger = nil // logs through slog.Default(), rebalances included
	c, err := connector.New(ctx, cfg)
	if err != nil {
		return err
	}
	var errorsDone sync.WaitGroup
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = errors.Join(err, c.Shutdown(sctx))
		errorsDone.Wait()
	}()
	m, err := c.CreateMessageStreams(ctx, map[string]int{topic: streams})
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted while joining the group
		}
		return err
	}
	errorsDone.Go(func() {
		for err := range c.Errors() { // closed by Shutdown
			log.Print("consumer: ", err)
		}
	})

	var total atomic.Int64
	var workers sync.WaitGroup
	for i, s := range m[topic] {
		workers.Go(func() { work(ctx, i, s, &total) })
	}
	ticker := time.NewTicker(2 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			// The workers stop with ctx. Once they are done, everything
			// they consumed is marked, and leaving the group (deferred)
			// commits it.
			workers.Wait()
			log.Printf("consumed %d messages", total.Load())
			return nil
		case <-ticker.C:
			log.Printf("%d messages so far", total.Load())
		}
	}
}

// work processes the messages of one stream until ctx ends.
func work(ctx context.Context, i int, s *connector.KafkaStream, total *atomic.Int64) {
	for {
		msg, err := s.Next(ctx)
		if err != nil {
			if errors.Is(err, connector.ErrShutdown) || ctx.Err() != nil {
				break // the connector was shut down, or ctx ended
			}
			log.Printf("worker %d: %v", i, err)
			continue
		}
		_ = msg // process the message here
		total.Add(1)
	}
}
