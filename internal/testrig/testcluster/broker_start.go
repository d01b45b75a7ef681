package testcluster

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// maxBrokerStarts is how many times Start launches a broker that keeps
// exiting for a passing reason (retriableStartFailure).
const maxBrokerStarts = 4

// retriableStartFailures are what a ZooKeeper-mode broker's log shows when
// it gave up at start-up for want of a ZooKeeper session in time, which a
// loaded machine or an election under way can cause: Kafka 3.9's own
// client timeout, ZooKeeper errors, and the zkclient
// timeout of brokers up to 1.1.
var retriableStartFailures = []string{
	"ZooKeeperClientTimeoutException",
	"Timed out waiting for connection while in state",
	"KeeperErrorCode = ConnectionLoss",
	"KeeperErrorCode = SessionExpired",
	"ZkTimeoutException",
}

// retriableStartFailure returns the line of a broker's start-up log that
// shows it may succeed if started again, or "".
func retriableStartFailure(log string) string {
	for _, line := range strings.Split(log, "\n") {
		for _, s := range retriableStartFailures {
			if strings.Contains(line, s) {
				return strings.TrimSpace(line)
			}
		}
	}
	return ""
}

// startBrokers launches the ZooKeeper-mode brokers together and waits
// until each has registered in ZooKeeper and answers requests. A broker
// that exits before it registered, for a reason its log shows to be
// passing, is started again (up to maxBrokerStarts times in all).
func (c *Cluster) startBrokers(ctx context.Context) error {
	starts := make([]int, len(c.brokers))
	for id, b := range c.brokers {
		if err := b.start(); err != nil {
			return err
		}
		starts[id]++
	}
	conn, err := c.dialZK(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for {
		registered := 0
		for id, b := range c.brokers {
			ok, _, err := conn.Exists(fmt.Sprintf("%s/brokers/ids/%d", c.chroot, id))
			if err == nil && ok {
				registered++
				continue
			}
			if b.running() {
				continue
			}
			why := retriableStartFailure(b.logSinceStart())
			if why == "" || starts[id] >= maxBrokerStarts {
				return fmt.Errorf("testcluster: %s exited during start-up (attempt %d); see %s", b.name, starts[id], b.logPath)
			}
			c.opts.Logf("testcluster: %s exited during start-up (%s); starting it again", b.name, why)
			if err := b.start(); err != nil {
				return err
			}
			starts[id]++
		}
		if registered == len(c.brokers) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testcluster: %d of %d brokers registered: %w", registered, len(c.brokers), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return c.waitAllListening(ctx)
}
