// Command example consumes a topic and serves the connector's metrics for
// Prometheus on /metrics, on port 2112 (the port of Prometheus's own Go
// instrumentation guide; Prometheus itself listens on 9090). Run it
// against the local cluster:
//
//	make cluster-up
//	set -a; . .cache/cluster/env; set +a
//	cd plugin/prometheus && go run ./example -topic orders
//	curl -s localhost:2112/metrics | grep ^zkconsumer_
//
// It exits cleanly on SIGINT or SIGTERM, committing what it consumed.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zkconsumer/zkconsumer/connector"
	zkprom "github.com/zkconsumer/zkconsumer/plugin/prometheus"
)

func main() {
	zkConnect := flag.String("zookeeper", os.Getenv("ZOOKEEPER_CONNECT"), "ZooKeeper connect string with chroot")
	topic := flag.String("topic", "orders", "topic to consume")
	group := flag.String("group", "prometheus-example", "consumer group")
	listen := flag.String("listen", "localhost:2112", "address to serve /metrics on")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *zkConnect, *topic, *group, *listen)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, zkConnect, topic, group, listen string) (err error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
	}()
	log.Printf("serving metrics on http://%s/metrics", ln.Addr())

	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = zkConnect
	cfg.GroupID = group
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	cfg.Metrics = zkprom.New(reg)
	c, err := connector.New(ctx, cfg)
	if err != nil {
		return err
	}
	// Errors outside the stream (a failed rebalance, a lost session, a
	// failed commit); the channel closes in Shutdown.
	var errorsDone sync.WaitGroup
	errorsDone.Go(func() {
		for err := range c.Errors() {
			log.Print("consumer: ", err)
		}
	})
	defer func() {
		// Leaving the group commits what was consumed and unregisters
		// the connector's metrics.
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
	var n int
	for {
		_, err := streams[topic][0].Next(ctx)
		if err != nil {
			if errors.Is(err, connector.ErrShutdown) || ctx.Err() != nil {
				break // the connector was shut down, or ctx ended
			}
			log.Print(err) // e.g. a partition error; iteration goes on
			continue
		}
		n++
	}
	log.Printf("consumed %d messages", n)
	return nil
}
