// Command properties takes its configuration from a Java properties file,
// such as the consumer.properties an old Kafka consumer already has, with
// -set overriding keys of the file as kafka-console-consumer.sh's
// --consumer-property does, and prints every message of a topic:
//
//	go run ./examples/properties -config examples/properties/consumer.properties \
//		-set zookeeper.connect="$ZOOKEEPER_CONNECT" -topic orders
//
// Warnings about the keys (one the connector does not know, one the
// coordination mode ignores) are printed; errors stop it. It exits
// cleanly on SIGINT or SIGTERM, committing what it printed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
)

func main() {
	config := flag.String("config", "consumer.properties", "properties file")
	set := map[string]string{}
	flag.Func("set", "key=value overriding the file (repeatable)", func(kv string) error {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("want key=value, got %q", kv)
		}
		set[k] = v
		return nil
	})
	topic := flag.String("topic", "orders", "topic to consume")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *config, set, *topic)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, config string, set map[string]string, topic string) (err error) {
	f, err := os.Open(config)
	if err != nil {
		return err
	}
	props, err := connector.ParseProperties(f) // Java's .properties syntax
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", config, err)
	}
	maps.Copy(props, set)
	// Every key the properties do not set keeps DefaultConfig's value.
	cfg, warnings, err := connector.ConfigFromProperties(props)
	for _, w := range warnings {
		log.Print("warning: ", w)
	}
	if err != nil {
		return err // every bad value at once, each naming its key
	}
	c, err := connector.New(ctx, cfg)
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
