// Command manual-commit turns auto-commit off and commits itself: after
// every batch of processed messages, and in a rebalance listener before
// ownership of its partitions moves to another member.
//
//	go run ./examples/manual-commit -topic orders
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// listener commits what was processed before ownership moves, so the next
// owner starts exactly after it. When the session was lost nothing can be
// committed any more: the next owner starts at the last commit and some
// messages are delivered twice (at least once).
type listener struct{ c *connector.ConsumerConnector }

func (l *listener) BeforeReleasingPartitions(ctx context.Context, owned map[string][]int32, lost bool) {
	log.Printf("releasing %v (session lost: %v)", owned, lost)
	if !lost {
		if err := l.c.CommitOffsets(ctx); err != nil {
			log.Print("commit before release: ", err)
		}
	}
}

func (l *listener) BeforeStartingFetchers(ctx context.Context, consumerID string, assignment map[string]map[int32]zkutil.ConsumerThreadID) {
	n := 0
	for _, parts := range assignment {
		for _, th := range parts {
			if th.ConsumerID == consumerID {
				n++
			}
		}
	}
	log.Printf("starting to fetch %d partitions", n)
}

func main() {
	zkConnect := flag.String("zookeeper", os.Getenv("ZOOKEEPER_CONNECT"), "ZooKeeper connect string with chroot")
	topic := flag.String("topic", "orders", "topic to consume")
	group := flag.String("group", "manual-commit-example", "consumer group")
	batch := flag.Int("batch", 100, "commit after this many messages")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	cfg := connector.DefaultConfig()
	cfg.ZookeeperConnect = *zkConnect
	cfg.GroupID = *group
	cfg.AutoCommitEnable = false
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	l := &listener{}
	c, err := connector.New(cfg, connector.WithRebalanceListener(l))
	if err != nil {
		log.Fatal(err)
	}
	l.c = c
	streams, err := c.CreateMessageStreams(ctx, map[string]int{*topic: 1})
	if err != nil {
		log.Fatal(err)
	}
	s := streams[*topic][0]
	n := 0
	for msg, err := range s.Messages(ctx) {
		if err != nil {
			log.Print(err)
			continue
		}
		_ = msg // process the message here
		s.MarkConsumed(msg)
		if n++; n%*batch == 0 {
			if err := c.CommitOffsets(ctx); err != nil {
				log.Print("commit: ", err)
			}
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.CommitOffsets(sctx); err != nil {
		log.Print("final commit: ", err)
	}
	if err := c.Shutdown(sctx); err != nil {
		log.Print(err)
	}
}
