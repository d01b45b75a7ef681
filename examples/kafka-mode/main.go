// Command kafka-mode consumes a topic in a group that Kafka's brokers
// coordinate instead of ZooKeeper, as Kafka's Java consumer does: no
// ZooKeeper is needed, and the offsets are committed to Kafka.
//
//	go run ./examples/kafka-mode -bootstrap 127.0.0.1:9092 -topic orders
//
// The bootstrap servers default to $KAFKA_BROKERS. It prints every message
// and exits cleanly on SIGINT or SIGTERM, committing what it printed.
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
	bootstrap := flag.String("bootstrap", os.Getenv("KAFKA_BROKERS"), "bootstrap.servers: some of the cluster's brokers, comma-separated")
	topic := flag.String("topic", "orders", "topic to consume")
	group := flag.String("group", "kafka-mode-example", "consumer group")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *bootstrap, *topic, *group)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, bootstrap, topic, group string) (err error) {
	cfg := connector.DefaultConfig()
	// The one change from ZooKeeper mode: Kafka's group coordinator runs
	// the group (group.protocol stays at its default, classic), and
	// offsets go to Kafka.
	cfg.GroupCoordination = connector.CoordinationKafka
	cfg.BootstrapServers = bootstrap
	cfg.GroupID = group
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	c, err := connector.New(ctx, cfg)
	if err != nil {
		return err
	}
	var errorsDone sync.WaitGroup
	errorsDone.Go(func() {
		for err := range c.Errors() { // e.g. unreachable brokers; closed by Shutdown
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
			log.Print(err)
			continue
		}
		fmt.Printf("%s-%d@%d: %s\n", msg.Topic, msg.Partition, msg.Offset, msg.Value)
	}
	return nil
}
