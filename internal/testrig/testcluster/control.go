package testcluster

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// broker returns the node of broker id, or an error.
func (c *Cluster) broker(id int) (*node, error) {
	if !c.Controlled() {
		return nil, ErrNotControlled
	}
	if id < 0 || id >= len(c.brokers) {
		return nil, fmt.Errorf("testcluster: no broker %d (the cluster has %d)", id, len(c.brokers))
	}
	return c.brokers[id], nil
}

// KillBroker ends broker id with SIGKILL: no controlled shutdown; its
// registration vanishes only when its ZooKeeper session expires (in KRaft
// mode: when the controller fences it after broker.session.timeout.ms).
func (c *Cluster) KillBroker(id int) error {
	b, err := c.broker(id)
	if err != nil {
		return err
	}
	return b.stop(syscall.SIGKILL, 30*time.Second)
}

// StopBroker stops broker id gracefully (SIGTERM, controlled shutdown). In
// KRaft mode a node that is also a controller stops its controller too.
func (c *Cluster) StopBroker(id int) error {
	b, err := c.broker(id)
	if err != nil {
		return err
	}
	return b.stop(syscall.SIGTERM, 60*time.Second)
}

// PauseBroker freezes broker id with SIGSTOP; ResumeBroker thaws it.
func (c *Cluster) PauseBroker(id int) error {
	b, err := c.broker(id)
	if err != nil {
		return err
	}
	return b.freeze(freezeTimeout)
}

// freezeTimeout bounds the wait for a paused JVM's threads to stop.
const freezeTimeout = 30 * time.Second

// ResumeBroker sends SIGCONT to a paused broker.
func (c *Cluster) ResumeBroker(id int) error {
	b, err := c.broker(id)
	if err != nil {
		return err
	}
	return b.signal(syscall.SIGCONT)
}

// RestartBroker starts a stopped or killed broker again on the same port and
// data directory, and waits until it has registered in ZooKeeper (in KRaft
// mode: until the metadata lists it) and answers requests.
func (c *Cluster) RestartBroker(ctx context.Context, id int) error {
	b, err := c.broker(id)
	if err != nil {
		return err
	}
	if b.running() {
		return fmt.Errorf("testcluster: broker %d is still running", id)
	}
	if err := b.start(); err != nil {
		return err
	}
	if c.kraft {
		// A KRaft broker opens its listener before it is unfenced.
		if err := c.waitListening(ctx, id); err != nil {
			return err
		}
		return c.waitKRaftBroker(ctx, id)
	}
	if err := c.waitBrokerID(ctx, id); err != nil {
		return err
	}
	return c.waitListening(ctx, id)
}

func (c *Cluster) waitBrokerID(ctx context.Context, id int) error {
	conn, err := c.dialZK(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	path := fmt.Sprintf("%s/brokers/ids/%d", c.chroot, id)
	for {
		ok, _, err := conn.Exists(path)
		if err == nil && ok {
			return nil
		}
		if b := c.brokers[id]; !b.running() {
			return fmt.Errorf("testcluster: broker %d exited; see %s", id, b.logPath)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testcluster: broker %d did not register: %w", id, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// BrokerRunning reports whether broker id's JVM is alive.
func (c *Cluster) BrokerRunning(id int) bool {
	b, err := c.broker(id)
	return err == nil && b.running()
}
