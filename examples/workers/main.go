// Command workers consumes one topic with several streams, each read by its
// own worker goroutine, as a member of a group: start it twice and the two
// processes split the partitions; stop one and the other takes them over.
//
//	go run ./examples/workers -topic orders -streams 4
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/stream"
)

func main() {
	zkConnect := flag.String("zookeeper", os.Getenv("ZOOKEEPER_CONNECT"), "ZooKeeper connect string with chroot")
	topic := flag.String("topic", "orders", "topic to consume")
	group := flag.String("group", "workers-example", "consumer group")
	streams := flag.Int("streams", 4, "streams (worker goroutines) in this process")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	cfg := connector.DefaultConfig()
	cfg.ZookeeperConnect = *zkConnect
	cfg.GroupID = *group
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	cfg.AutoCommitInterval = 5 * time.Second
	cfg.Logger = nil // set a *slog.Logger here to see rebalances
	c, err := connector.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	m, err := c.CreateMessageStreams(ctx, map[string]int{*topic: *streams})
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		for err := range c.Errors() {
			log.Print("consumer: ", err)
		}
	}()

	var total atomic.Int64
	var wg sync.WaitGroup
	for i, s := range m[*topic] {
		wg.Add(1)
		go func(i int, s *stream.KafkaStream) {
			defer wg.Done()
			for msg, err := range s.Messages(ctx) {
				if err != nil {
					log.Printf("worker %d: %v", i, err)
					continue
				}
				_ = msg // process the message here
				total.Add(1)
			}
		}(i, s)
	}
	ticker := time.NewTicker(2 * time.Second)
	defer ticker.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-ticker.C:
			log.Printf("%d messages so far", total.Load())
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Shutdown(sctx); err != nil { // ends every worker's loop
		log.Print(err)
	}
	wg.Wait()
	log.Printf("consumed %d messages", total.Load())
}
