// Command pool processes one stream with a pool of worker goroutines,
// keeping each partition's order, and commits only what the workers have
// finished (at-least-once even when it crashes mid-batch):
//
//	go run ./examples/pool -zookeeper 127.0.0.1:2181/kafka -topic orders -workers 4
//
// One goroutine reads the stream and hands each message to the worker of
// its partition (partition modulo workers), so a partition's messages are
// processed one after the other, in offset order, while partitions go in
// parallel. Automatic commits are off: a stream counts a message as
// consumed when it is asked for the next one, which here is before a
// worker has processed it. Each worker commits the messages it finished,
// with CommitMessages, after every -batch messages and when its queue runs
// dry. A message of a partition that moved to another member meanwhile is
// refused (ErrNotOwner) and read again by that member.
//
// It logs its progress every two seconds and exits cleanly on SIGINT or
// SIGTERM: the reader stops, the workers finish and commit what they hold,
// then the member leaves the group.
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
	group := flag.String("group", "pool-example", "consumer group")
	workers := flag.Int("workers", 4, "worker goroutines")
	batch := flag.Int("batch", 50, "messages a worker processes between commits")
	flag.Parse()
	if *workers < 1 || *batch < 1 {
		log.Fatal("-workers and -batch must be at least 1")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *zkConnect, *topic, *group, *workers, *batch)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, zkConnect, topic, group string, workers, batch int) (err error) {
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = zkConnect
	cfg.GroupID = group
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	cfg.AutoCommitEnable = false // the workers commit what they finished
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
	streams, err := c.CreateMessageStreams(ctx, map[string]int{topic: 1})
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

	var processed, committed atomic.Int64
	queues := make([]chan *connector.Message, workers)
	var pool sync.WaitGroup
	for i := range queues {
		queues[i] = make(chan *connector.Message, batch)
		pool.Go(func() { work(c, queues[i], batch, &processed, &committed) })
	}
	ticker := time.NewTicker(2 * time.Second)
	defer ticker.Stop()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				log.Printf("%d messages processed, %d committed", processed.Load(), committed.Load())
			}
		}
	}()

	// The reader: each partition always goes to the same worker.
	for { // ends when ctx does
		msg, err := streams[topic][0].Next(ctx)
		if err != nil {
			if errors.Is(err, connector.ErrShutdown) || ctx.Err() != nil {
				break // the connector was shut down, or ctx ended
			}
			log.Print("stream: ", err)
			continue
		}
		queues[int(msg.Partition)%workers] <- msg
	}
	for _, q := range queues {
		close(q)
	}
	pool.Wait()
	log.Printf("%d messages processed, %d committed (final)", processed.Load(), committed.Load())
	return nil
}

// work processes the messages of its queue in order, committing them
// after every batch and whenever the queue runs dry, until the queue is
// closed.
func work(c *connector.ConsumerConnector, queue <-chan *connector.Message, batch int, processed, committed *atomic.Int64) {
	var done []*connector.Message
	commit := func() {
		if len(done) == 0 {
			return
		}
		// Its own context: the application's may be cancelled already,
		// and what is finished should still be committed.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.CommitMessages(ctx, done...); err != nil {
			log.Print("commit: ", err) // ErrNotOwner: the partition moved, its next owner reads it again
		} else {
			committed.Add(int64(len(done)))
		}
		done = done[:0]
	}
	for {
		var msg *connector.Message
		var ok bool
		select {
		case msg, ok = <-queue:
		default:
			commit() // nothing waiting: commit what is finished
			msg, ok = <-queue
		}
		if !ok {
			commit()
			return
		}
		_ = msg.Value // process the message here
		processed.Add(1)
		done = append(done, msg)
		if len(done) >= batch {
			commit()
		}
	}
}
