// Command manual-commit turns auto-commit off and commits itself: after
// every batch of processed messages, and in a rebalance listener before
// ownership of its partitions moves to another member.
//
//	go run ./examples/manual-commit -zookeeper 127.0.0.1:2181/kafka -topic orders -batch 100
//
// It logs every commit and exits cleanly on SIGINT or SIGTERM, after a
// last commit.
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

// listener commits what was processed before ownership moves, so the next
// owner starts exactly after it. When the session was lost nothing can be
// committed any more: the next owner starts at the last commit and some
// messages are delivered twice (at least once).
var listener = connector.RebalanceListenerFuncs{
	Releasing: func(ctx context.Context, c *connector.ConsumerConnector, released map[string][]int32, lost bool) {
		log.Printf("releasing %v (session lost: %v)", released, lost)
		if !lost {
			if err := c.CommitOffsets(ctx); err != nil {
				log.Print("commit before release: ", err)
			}
		}
	},
	Starting: func(ctx context.Context, c *connector.ConsumerConnector, gained map[string][]int32) {
		log.Printf("starting to fetch %v", gained)
	},
}

func main() {
	zkConnect := flag.String("zookeeper", os.Getenv("ZOOKEEPER_CONNECT"), "ZooKeeper connect string with chroot")
	topic := flag.String("topic", "orders", "topic to consume")
	group := flag.String("group", "manual-commit-example", "consumer group")
	batch := flag.Int("batch", 100, "commit after this many messages (at least 1)")
	flag.Parse()
	if *batch < 1 {
		log.Fatalf("-batch must be at least 1, got %d", *batch)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *zkConnect, *topic, *group, *batch)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, zkConnect, topic, group string, batch int) (err error) {
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = zkConnect
	cfg.GroupID = group
	cfg.AutoCommitEnable = false
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	c, err := connector.New(ctx, cfg, connector.WithRebalanceListener(listener))
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
	if err := c.Assignment().Err; err != nil {
		// The first rebalance failed (rebalance.max.retries times); the
		// connector keeps trying and the stream fills once it succeeds.
		log.Print("no partitions yet: ", err)
	}
	s := streams[topic][0]
	n := 0
	for {
		msg, err := s.Next(ctx)
		if err != nil {
			if errors.Is(err, connector.ErrShutdown) || ctx.Err() != nil {
				break // the connector was shut down, or ctx ended
			}
			log.Print(err)
			continue
		}
		_ = msg // process the message here
		s.MarkConsumed(msg)
		if n++; n%batch == 0 {
			if err := c.CommitOffsets(ctx); errors.Is(err, connector.ErrRebalanceInProgress) {
				// The listener committed before the partitions moved.
				log.Print("commit skipped: ", err)
			} else if err != nil {
				log.Print("commit: ", err)
			} else {
				log.Printf("committed after %d messages", n)
			}
		}
	}
	// ctx is done: commit the last partial batch before leaving.
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	switch err := c.CommitOffsets(sctx); {
	case errors.Is(err, connector.ErrRebalanceInProgress):
		log.Print("final commit skipped: ", err) // the listener committed before the release
	case err != nil:
		return fmt.Errorf("final commit: %w", err)
	default:
		log.Printf("committed after %d messages (final)", n)
	}
	return nil
}
