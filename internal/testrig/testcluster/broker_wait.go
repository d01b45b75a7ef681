package testcluster

import (
	"context"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// Waiting for the brokers of either kind of cluster to come up: to be
// registered (in ZooKeeper, or with the KRaft controllers) and to answer
// requests. A broker whose JVM exits meanwhile fails the wait at once.

// waitBrokerCount polls count every 100 ms until it reports at least n
// registered brokers. It fails when a broker's JVM has exited, or when ctx
// ends (with the last count and error).
func (c *Cluster) waitBrokerCount(ctx context.Context, n int, count func() (int, error)) error {
	for {
		got, err := count()
		if err == nil && got >= n {
			return nil
		}
		for _, b := range c.brokers {
			if !b.running() {
				return fmt.Errorf("testcluster: %s exited; see %s", b.name, b.logPath)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testcluster: %d of %d brokers registered (err %v): %w", got, n, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitAllListening waits until every broker answers requests.
func (c *Cluster) waitAllListening(ctx context.Context) error {
	for id := range c.brokers {
		if err := c.waitListening(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// waitListening waits until broker id answers an ApiVersions request: a
// broker registers in ZooKeeper before its listener accepts requests.
func (c *Cluster) waitListening(ctx context.Context, id int) error {
	for {
		b := sarama.NewBroker(c.brokerAddrs[id])
		cfg := c.ClientConfig()
		cfg.Net.DialTimeout = time.Second
		if err := b.Open(cfg); err == nil {
			_, err = b.ApiVersions(&sarama.ApiVersionsRequest{})
			b.Close()
			if err == nil {
				return nil
			}
		}
		if !c.brokers[id].running() {
			return fmt.Errorf("testcluster: broker %d exited; see %s", id, c.brokers[id].logPath)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testcluster: broker %d does not answer on %s: %w", id, c.brokerAddrs[id], ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
