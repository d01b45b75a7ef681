package zkprom_test

import (
	"context"
	"errors"
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zkconsumer/zkconsumer/connector"
	zkprom "github.com/zkconsumer/zkconsumer/plugin/prometheus"
)

// Export a connector's metrics on /metrics. The Collector registers in
// connector.New and unregisters in Shutdown.
func Example() {
	reg := prometheus.NewRegistry()
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = "localhost:2181/kafka"
	cfg.GroupID = "orders-audit"
	cfg.Metrics = zkprom.New(reg)
	c, err := connector.New(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Shutdown(context.Background())

	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	go func() { log.Print(http.ListenAndServe(":2112", nil)) }()

	streams, err := c.CreateMessageStreams(context.Background(), map[string]int{"orders": 1})
	if err != nil {
		log.Fatal(err)
	}
	for {
		msg, err := streams["orders"][0].Next(context.Background())
		if err != nil {
			if errors.Is(err, connector.ErrShutdown) {
				break // the connector was shut down
			}
			log.Print(err)
			continue
		}
		_ = msg // process it
	}
}
