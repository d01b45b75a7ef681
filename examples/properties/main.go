// Command properties takes its configuration from a Java properties file,
// such as the consumer.properties an old Kafka consumer already has, and
// prints every message of a topic:
//
//	go run ./examples/properties -config examples/properties/consumer.properties -topic orders
//
// Warnings about the file (a key the connector does not know, a key the
// coordination mode ignores) are printed; errors stop it. It exits
// cleanly on SIGINT or SIGTERM, committing what it printed.
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
	config := flag.String("config", "consumer.properties", "properties file")
	topic := flag.String("topic", "orders", "topic to consume")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *config, *topic)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, config, topic string) (err error) {
	// Every key the file does not set keeps DefaultConfig's value.
	cfg, warnings, err := connector.ConfigFromPropertiesFile(config)
	for _, w := range warnings {
		log.Print("warning: ", w)
	}
	if err != nil {
		return err // every bad value at once, each naming its key
	}
	c, err := connector.NewContext(ctx, cfg)
	if err != nil {
		return err
	}
	var errorsDone sync.WaitGroup
	errorsDone.Go(func() {
		for err := range c.Errors() { // closed by Shutdown
			log.Print("consumer: ", err)
		}
	})
	defer func() {
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
	for msg, err := range streams[topic][0].Messages(ctx) {
		if err != nil {
			log.Print(err)
			continue
		}
		fmt.Printf("%s-%d@%d: %s\n", msg.Topic, msg.Partition, msg.Offset, msg.Value)
	}
	return nil
}
