package connector_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
)

// A member of group "orders-audit" reads topic "orders" with two streams,
// one goroutine each, and leaves the group cleanly.
func ExampleConsumerConnector() {
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = "127.0.0.1:2181/kafka"
	cfg.GroupID = "orders-audit"
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest

	c, err := connector.New(context.Background(), cfg)
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
			for {
				msg, err := s.Next(ctx)
				if err != nil {
					if errors.Is(err, connector.ErrShutdown) || ctx.Err() != nil {
						return // the connector was shut down, or ctx ended
					}
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
func ExampleParseProperties() {
	f, err := os.Open("consumer.properties")
	if err != nil {
		log.Fatal(err)
	}
	props, err := connector.ParseProperties(f)
	f.Close()
	if err != nil {
		log.Fatal(err) // a malformed \uXXXX escape: a *SyntaxError
	}
	cfg, warnings, err := connector.ConfigFromProperties(props)
	if err != nil {
		log.Fatal(err) // every bad value, each a *ConfigError naming its key
	}
	for _, w := range warnings {
		log.Print(w) // unknown keys, as Kafka warns about them
	}
	_ = cfg
}

// Moving off ZooKeeper: the same properties, plus two keys, make the
// connector a member of a group coordinated by Kafka's brokers. The
// ZooKeeper keys left in the file are ignored, with a warning each.
func ExampleConfigFromProperties_kafkaCoordination() {
	cfg, warnings, err := connector.ConfigFromProperties(map[string]string{
		"group.id":                      "orders-audit",
		"zookeeper.connect":             "127.0.0.1:2181/kafka",
		"offsets.storage":               "kafka",
		"zkconsumer.group.coordination": "kafka",
		"bootstrap.servers":             "127.0.0.1:9092",
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, w := range warnings {
		fmt.Println(w)
	}
	fmt.Println(cfg.Validate() == nil, cfg.GroupCoordination, cfg.SessionTimeout)
	// Output:
	// connector: property offsets.storage is ignored with zkconsumer.group.coordination=kafka; offsets are committed to Kafka's group coordinator
	// connector: property zookeeper.connect is ignored with zkconsumer.group.coordination=kafka; the group's brokers are found through bootstrap.servers
	// true kafka 45s
}

// Backpressure on one slow downstream: the partitions whose sink is behind
// are paused, without leaving the group, and resumed once it caught up.
// The others keep flowing, on every stream.
func ExampleConsumerConnector_Pause() {
	var c *connector.ConsumerConnector // from connector.New, streams created
	slow := []connector.TopicPartition{{Topic: "orders", Partition: 3}}
	if err := c.Pause(slow...); err != nil {
		log.Print(err) // errors.Is(err, connector.ErrNotOwner): moved by a rebalance
	}
	// ... the downstream of partition 3 catches up ...
	if err := c.Resume(slow...); err != nil {
		log.Print(err)
	}
}

// After CreateMessageStreams, Assignment tells whether the first rebalance
// succeeded and which partitions this member reads.
func ExampleConsumerConnector_Assignment() {
	var c *connector.ConsumerConnector // from connector.New
	ctx := context.Background()
	if _, err := c.CreateMessageStreams(ctx, map[string]int{"orders": 2}); err != nil {
		log.Fatal(err)
	}
	a := c.Assignment()
	switch {
	case errors.Is(a.Err, connector.ErrRebalanceFailed):
		log.Print("owning nothing for now, retrying: ", a.Err)
	case a.Err != nil:
		log.Print(a.Err)
	default:
		log.Printf("generation %d: %v", a.Generation, a.Partitions)
	}
}

// With auto.commit.enable=false, a listener commits what was consumed
// before partitions move to another member. It is installed before New
// returns the connector, so it commits through the connector each call
// carries.
func ExampleRebalanceListenerFuncs() {
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = "127.0.0.1:2181/kafka"
	cfg.GroupID = "orders-audit"
	cfg.AutoCommitEnable = false
	commitBeforeRelease := connector.RebalanceListenerFuncs{
		Releasing: func(ctx context.Context, c *connector.ConsumerConnector, released map[string][]int32, lost bool) {
			if lost {
				return // others may own them already: nothing can be committed
			}
			if err := c.CommitOffsets(ctx); err != nil {
				log.Print("commit before release: ", err)
			}
		},
	}
	c, err := connector.New(context.Background(), cfg, connector.WithRebalanceListener(commitBeforeRelease))
	if err != nil {
		log.Fatal(err)
	}
	_ = c
}

// A member whose every connection, to ZooKeeper and to the brokers, goes
// out from one local address with TCP keep-alives every 15 s. A SOCKS5
// dialer (golang.org/x/net/proxy) or a test's fault-injecting dialer fits
// the same option.
func ExampleWithDialer() {
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = "zk1:2181,zk2:2181,zk3:2181/kafka"
	cfg.GroupID = "orders-audit"
	d := &net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.ParseIP("10.0.0.7")},
		KeepAlive: 15 * time.Second,
	}
	c, err := connector.New(context.Background(), cfg, connector.WithDialer(d))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Shutdown(context.Background())
}
