// Command pause-resume applies backpressure: messages go to a work queue
// that a slower worker drains, and when the queue is full the member
// pauses its partitions, without leaving the group, until the worker has
// emptied it. A readiness check tells whether it is consuming:
//
//	go run ./examples/pause-resume -zookeeper 127.0.0.1:2181/kafka -topic orders -listen 127.0.0.1:8080
//	curl -i http://127.0.0.1:8080/ready
//
// /ready answers 200 while the member holds its generation's partitions
// and has not paused them all, and 503 with the reason otherwise (see
// Assignment's Err). The worker prints every
// message; pauses and resumes are logged. It exits cleanly on SIGINT or
// SIGTERM, committing what the worker printed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
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
	group := flag.String("group", "pause-resume-example", "consumer group")
	queue := flag.Int("queue", 10, "work queue capacity (at least 1)")
	work := flag.Duration("work", 50*time.Millisecond, "time the worker spends on each message")
	listen := flag.String("listen", "127.0.0.1:8080", "address of the readiness check")
	flag.Parse()
	if *queue < 1 {
		log.Fatalf("-queue must be at least 1, got %d", *queue)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *zkConnect, *topic, *group, *queue, *work, *listen)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, zkConnect, topic, group string, queueLen int, work time.Duration, listen string) (err error) {
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = zkConnect
	cfg.GroupID = group
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	cfg.AutoCommitEnable = false // commit what the worker finished, not what is queued
	c, err := connector.New(ctx, cfg)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for err := range c.Errors() { // closed by Shutdown
			log.Print("consumer: ", err)
		}
	})
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = errors.Join(err, c.Shutdown(sctx))
		wg.Wait()
	}()

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if why := notReady(c); why != "" {
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})}
	log.Printf("readiness check on http://%s/ready", ln.Addr())
	wg.Go(func() { _ = srv.Serve(ln) }) // ErrServerClosed after Close
	defer srv.Close()

	streams, err := c.CreateMessageStreams(ctx, map[string]int{topic: 1})
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted while joining the group
		}
		return err
	}

	queue := make(chan *connector.Message, queueLen)
	g := &gate{c: c}
	wg.Go(func() { worker(c, g, queue, work) })
	// The reader keeps asking for messages while partitions are paused:
	// Next simply waits until they are resumed.
	for {
		msg, err := streams[topic][0].Next(ctx)
		if err != nil {
			if errors.Is(err, connector.ErrShutdown) || ctx.Err() != nil {
				break // the connector was shut down, or ctx ended
			}
			log.Print(err)
			continue
		}
		queue <- msg
		if len(queue) == cap(queue) {
			g.pause() // nothing more is handed out until the worker resumes
		}
	}
	close(queue) // the worker finishes what is queued and commits it
	return nil
}

// worker processes the queue's messages in order and commits them, and
// resumes the paused partitions once it has emptied the queue.
func worker(c *connector.ConsumerConnector, g *gate, queue <-chan *connector.Message, work time.Duration) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case msg, ok := <-queue:
			if !ok {
				return
			}
			time.Sleep(work) // process the message here
			fmt.Printf("%s-%d@%d: %s\n", msg.Topic, msg.Partition, msg.Offset, msg.Value)
			// Its own context: what is finished is committed even
			// after the application's context has ended.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := c.CommitMessages(ctx, msg); err != nil {
				log.Print("commit: ", err) // ErrNotOwner: the partition moved, its next owner reads it again
			}
			cancel()
		case <-tick.C: // also look at the queue while it is empty
		}
		if len(queue) == 0 {
			g.resume()
		}
	}
}

// gate pauses and resumes every partition the member owns.
type gate struct {
	c      *connector.ConsumerConnector
	mu     sync.Mutex
	paused []connector.TopicPartition
}

func (g *gate) pause() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused != nil {
		return
	}
	var tps []connector.TopicPartition
	for topic, parts := range g.c.Assignment().Partitions {
		for _, p := range parts {
			tps = append(tps, connector.TopicPartition{Topic: topic, Partition: p})
		}
	}
	// A partition that moved to another member meanwhile is refused
	// (ErrNotOwner); the others are paused.
	if err := g.c.Pause(tps...); err != nil {
		log.Print("pause: ", err)
	}
	g.paused = tps
	log.Printf("work queue full: paused %d partitions", len(tps))
}

func (g *gate) resume() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused == nil {
		return
	}
	if err := g.c.Resume(g.paused...); err != nil {
		log.Print("resume: ", err) // moved partitions start unpaused wherever they are owned next
	}
	log.Printf("work queue empty: resumed %d partitions", len(g.paused))
	g.paused = nil
}

// notReady says why the member is not consuming, or returns "" when it
// is: Assignment().Err is nil and it has not paused every partition it
// owns. A member that owns no partitions in its generation (a group with
// more members than partitions) counts as ready, as in
// docs/production.md: it is doing its part, and a rolling update must not
// wait for it.
func notReady(c *connector.ConsumerConnector) string {
	a := c.Assignment()
	if a.Err != nil {
		return a.Err.Error()
	}
	owned, paused := 0, 0
	for topic, parts := range a.Partitions {
		owned += len(parts)
		paused += len(a.Paused[topic])
	}
	if owned > 0 && paused == owned {
		return fmt.Sprintf("all %d partitions paused: the work queue is full", owned)
	}
	return ""
}
