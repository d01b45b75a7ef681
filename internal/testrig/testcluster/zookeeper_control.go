package testcluster

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// zkNode returns the node of ZooKeeper server i, or an error.
func (c *Cluster) zkNode(i int) (*node, error) {
	if c.kraft {
		return nil, ErrNoZooKeeper
	}
	if !c.Controlled() {
		return nil, ErrNotControlled
	}
	if i < 0 || i >= len(c.zk) {
		return nil, fmt.Errorf("testcluster: no ZooKeeper server %d (the cluster has %d)", i, len(c.zk))
	}
	return c.zk[i], nil
}

func (c *Cluster) setZKPaused(i int, paused bool) {
	c.mu.Lock()
	c.zkPaused[i] = paused
	c.mu.Unlock()
}

// ZooKeeperServerRunning reports whether the JVM of ZooKeeper server i is
// alive (paused or not).
func (c *Cluster) ZooKeeperServerRunning(i int) bool {
	z, err := c.zkNode(i)
	return err == nil && z.running()
}

// KillZooKeeperServer ends ZooKeeper server i with SIGKILL. Its clients
// move to the other servers; if it led the ensemble, the others elect a
// new leader after noticing (at once: its connections are reset).
func (c *Cluster) KillZooKeeperServer(i int) error {
	z, err := c.zkNode(i)
	if err != nil {
		return err
	}
	if err := z.stop(syscall.SIGKILL, 30*time.Second); err != nil {
		return err
	}
	c.setZKPaused(i, false)
	return nil
}

// RestartZooKeeperServer starts killed ZooKeeper server i again on the
// same ports and data, and waits until it serves clients again, as part of
// the quorum (which needs a majority of the servers up).
func (c *Cluster) RestartZooKeeperServer(ctx context.Context, i int) error {
	z, err := c.zkNode(i)
	if err != nil {
		return err
	}
	if z.running() {
		return fmt.Errorf("testcluster: ZooKeeper server %d is still running", i)
	}
	if err := z.start(); err != nil {
		return err
	}
	return c.waitZooKeeperServing(ctx, i)
}

// PauseZooKeeperServer freezes ZooKeeper server i with SIGSTOP: its
// connections stay open but nothing answers, so its peers and clients give
// up on it only by their timeouts.
func (c *Cluster) PauseZooKeeperServer(i int) error {
	z, err := c.zkNode(i)
	if err != nil {
		return err
	}
	if err := z.freeze(freezeTimeout); err != nil {
		return err
	}
	c.setZKPaused(i, true)
	return nil
}

// ResumeZooKeeperServer thaws ZooKeeper server i with SIGCONT.
func (c *Cluster) ResumeZooKeeperServer(i int) error {
	z, err := c.zkNode(i)
	if err != nil {
		return err
	}
	if err := z.signal(syscall.SIGCONT); err != nil {
		return err
	}
	c.setZKPaused(i, false)
	return nil
}

// IsolateZooKeeperServer cuts ZooKeeper server i off from the other
// servers, as a network partition would, while its client port stays
// reachable: the proxies between the servers hold every open connection
// to and from it silent (see Blackhole) and refuse new ones. A follower cut
// off gives up on the leader after ZooKeeperSyncLimit ticks and stops
// serving clients until it is healed; a leader cut off steps down as
// quickly, and the others elect a new one if they are a majority. Only an
// ensemble started by this process (not detached) has the proxies;
// otherwise the error is ErrNoIsolation.
func (c *Cluster) IsolateZooKeeperServer(i int) error { return c.setIsolated(i, true) }

// HealZooKeeperServer ends the isolation of ZooKeeper server i: held
// connections flow again (see Blackhole) and new ones are let through, so
// it rejoins the ensemble (WaitZooKeeperQuorum waits for that).
func (c *Cluster) HealZooKeeperServer(i int) error { return c.setIsolated(i, false) }

func (c *Cluster) setIsolated(i int, isolated bool) error {
	if _, err := c.zkNode(i); err != nil {
		return err
	}
	if c.quorum == nil {
		return ErrNoIsolation
	}
	c.quorum.setIsolated(i, isolated)
	return nil
}

// zkAll checks that the cluster's ZooKeeper can be controlled.
func (c *Cluster) zkAll() error {
	if c.kraft {
		return ErrNoZooKeeper
	}
	if !c.Controlled() {
		return ErrNotControlled
	}
	return nil
}

// KillZooKeeper ends every ZooKeeper server with SIGKILL. Sessions survive
// a restart (ZooKeeper reloads them with a fresh timeout), so this does not
// expire clients; use SessionTap for that. For one server of an ensemble,
// use KillZooKeeperServer.
func (c *Cluster) KillZooKeeper() error {
	if err := c.zkAll(); err != nil {
		return err
	}
	var errs []error
	for i := range c.zk {
		errs = append(errs, c.KillZooKeeperServer(i))
	}
	return errors.Join(errs...)
}

// PauseZooKeeper freezes every ZooKeeper server with SIGSTOP.
func (c *Cluster) PauseZooKeeper() error {
	if err := c.zkAll(); err != nil {
		return err
	}
	var errs []error
	for i := range c.zk {
		errs = append(errs, c.PauseZooKeeperServer(i))
	}
	return errors.Join(errs...)
}

// ResumeZooKeeper thaws every ZooKeeper server.
func (c *Cluster) ResumeZooKeeper() error {
	if err := c.zkAll(); err != nil {
		return err
	}
	var errs []error
	for i := range c.zk {
		errs = append(errs, c.ResumeZooKeeperServer(i))
	}
	return errors.Join(errs...)
}

// RestartZooKeeper starts every killed ZooKeeper server again on the same
// ports and data, and waits until ZooKeeper serves (WaitZooKeeperQuorum).
// It fails if every server is still running.
func (c *Cluster) RestartZooKeeper(ctx context.Context) error {
	if err := c.zkAll(); err != nil {
		return err
	}
	started := 0
	for _, z := range c.zk {
		if z.running() {
			continue
		}
		if err := z.start(); err != nil {
			return err
		}
		started++
	}
	if started == 0 {
		return fmt.Errorf("testcluster: ZooKeeper is still running")
	}
	return c.WaitZooKeeperQuorum(ctx)
}
