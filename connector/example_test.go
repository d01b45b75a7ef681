package connector_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
)

// A member of group "orders-audit" reads topic "orders" with two streams,
// one goroutine each, and leaves the group cleanly.
func ExampleConsumerConnector() {
	cfg := connector.DefaultConfig()
	cfg.ZookeeperConnect = "127.0.0.1:2181/kafka"
	cfg.GroupID = "orders-audit"
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest

	c, err := connector.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streams, err := c.CreateMessageStreams(ctx, map[string]int{"orders": 2})
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		for err := range c.Errors() {
			log.Print(err) // rebalance failures, lost sessions, ...
		}
	}()
	for _, s := range streams["orders"] {
		go func() {
			for msg, err := range s.Messages(ctx) {
				if err != nil {
					log.Print(err) // e.g. a message too large for one partition
					continue
				}
				fmt.Printf("%s-%d@%d %s\n", msg.Topic, msg.Partition, msg.Offset, msg.Value)
			}
		}()
	}

	time.Sleep(time.Minute) // the application's work
	shutdownCtx, done := context.WithTimeout(context.Background(), 30*time.Second)
	defer done()
	if err := c.Shutdown(shutdownCtx); err != nil { // commits, releases, ends the streams
		log.Print(err)
	}
}

// Loading the consumer.properties a Scala consumer already uses.
func ExampleConfigFromPropertiesFile() {
	cfg, warnings, err := connector.ConfigFromPropertiesFile("consumer.properties")
	if err != nil {
		log.Fatal(err)
	}
	for _, w := range warnings {
		log.Print(w) // unknown keys, as Kafka warns about them
	}
	_ = cfg
}
