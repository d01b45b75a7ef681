package testcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Timing of the ZooKeeper servers the harness starts, alone or as an
// ensemble. Clients may ask for session timeouts from 2 ticks (1 s) to
// 60 s. In an ensemble, a follower that hears nothing from the leader for
// ZooKeeperSyncLimit ticks (5 s) gives up on it and looks for a new one,
// and a leader that hears from no quorum for as long steps down; a server
// has ZooKeeperInitLimit ticks (20 s) to connect to the leader and catch
// up with it.
const (
	// ZooKeeperTickTime is the servers' tickTime.
	ZooKeeperTickTime = 500 * time.Millisecond
	// ZooKeeperSyncLimit is the ensemble's syncLimit, in ticks.
	ZooKeeperSyncLimit = 10
	// ZooKeeperInitLimit is the ensemble's initLimit, in ticks.
	ZooKeeperInitLimit = 40
)

// zkNotServing is what a ZooKeeper server answers a four-letter word with
// while it is not part of a working quorum (looking for a leader, or
// catching up with one).
const zkNotServing = "not currently serving requests"

// ErrZooKeeperNotServing is returned by ZooKeeperServerMode for a server
// that runs and answers but does not serve clients: it is looking for a
// leader or syncing with one, for instance because it is cut off from the
// others or the ensemble has lost its quorum.
var ErrZooKeeperNotServing = errors.New("testcluster: the ZooKeeper server is not currently serving requests")

// ErrNoIsolation is returned by IsolateZooKeeperServer and
// HealZooKeeperServer on a cluster without the proxies between its
// ZooKeeper servers: a single server, or a detached cluster (zkcluster up),
// whose proxies could not outlive the process that started it.
var ErrNoIsolation = errors.New("testcluster: this cluster has no proxies between its ZooKeeper servers (a single server, or a detached cluster); isolation needs an ensemble started by this process")

// Four-letter words the servers answer; srvr tells a server's mode.
const zkFourLetterWords = "srvr,stat,mntr,ruok,conf,cons,wchs,envi"

// zkMyID is the ZooKeeper server id (myid) of the server with index i.
func zkMyID(i int) int { return i + 1 }

// zkPorts are the real ports of one ZooKeeper server.
type zkPorts struct{ client, quorum, election int }

// startZooKeeper writes the configuration of every ZooKeeper server,
// starts them together and waits until they serve (an ensemble: until a
// leader is elected and every server follows it).
func (c *Cluster) startZooKeeper(ctx context.Context, cp, log4j string, ports []zkPorts) error {
	n := len(ports)
	c.zkServers = make([]string, n)
	for i, p := range ports {
		c.zkServers[i] = net.JoinHostPort("127.0.0.1", strconv.Itoa(p.client))
	}
	if n > 1 && !c.opts.Detach {
		election, quorum := make([]string, n), make([]string, n)
		for i, p := range ports {
			election[i] = net.JoinHostPort("127.0.0.1", strconv.Itoa(p.election))
			quorum[i] = net.JoinHostPort("127.0.0.1", strconv.Itoa(p.quorum))
		}
		q, err := newQuorumNet(election, quorum)
		if err != nil {
			return err
		}
		c.quorum = q
		q.start()
	}
	for i := range ports {
		if err := c.addZooKeeperServer(cp, log4j, i, ports); err != nil {
			return err
		}
	}
	for _, z := range c.zk {
		if err := z.start(); err != nil {
			return err
		}
	}
	return c.waitQuorum(ctx, true)
}

// addZooKeeperServer writes the directory and zoo.cfg of server i. A
// server's own server.N line names its real quorum and election ports (it
// binds them); the lines of the others name the proxies in front of
// theirs, if the cluster has them.
func (c *Cluster) addZooKeeperServer(cp, log4j string, i int, ports []zkPorts) error {
	name := "zookeeper"
	if len(ports) > 1 {
		name = fmt.Sprintf("zookeeper-%d", i)
	}
	dir := filepath.Join(c.dir, name)
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	props := map[string]string{
		"dataDir":                        data,
		"clientPort":                     strconv.Itoa(ports[i].client),
		"clientPortAddress":              "127.0.0.1",
		"tickTime":                       strconv.FormatInt(ZooKeeperTickTime.Milliseconds(), 10),
		"maxSessionTimeout":              "60000",
		"maxClientCnxns":                 "0",
		"admin.enableServer":             "false",
		"4lw.commands.whitelist":         zkFourLetterWords,
		"autopurge.purgeInterval":        "0",
		"zookeeper.snapshot.trust.empty": "true",
	}
	if len(ports) > 1 {
		props["initLimit"] = strconv.Itoa(ZooKeeperInitLimit)
		props["syncLimit"] = strconv.Itoa(ZooKeeperSyncLimit)
		// The servers' views must stay as written: each names the
		// proxies in front of the others.
		props["reconfigEnabled"] = "false"
		for j, p := range ports {
			quorum, election := net.JoinHostPort("127.0.0.1", strconv.Itoa(p.quorum)), net.JoinHostPort("127.0.0.1", strconv.Itoa(p.election))
			if j != i && c.quorum != nil {
				quorum, election = c.quorum.quorumAddr(j), c.quorum.electionAddr(j)
			}
			props[fmt.Sprintf("server.%d", zkMyID(j))] = quorum + ":" + portOf(election)
		}
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(zkMyID(i))+"\n"), 0o644); err != nil {
			return err
		}
	}
	if c.security != nil {
		c.security.addZooKeeperTLS(props)
	}
	if i < len(c.opts.ZooKeeperServerProperties) {
		maps.Copy(props, c.opts.ZooKeeperServerProperties[i])
	}
	cfg := filepath.Join(dir, "zoo.cfg")
	if err := writeProperties(cfg, props); err != nil {
		return err
	}
	flags := c.jvmFlags("256m", log4j, dir)
	// A server that lost its peers retries them at most every 2 s (60 s by
	// default), so that a healed server rejoins promptly.
	flags = append(flags, "-Dzookeeper.fastleader.maxNotificationInterval=2000")
	c.zkPaused = append(c.zkPaused, false)
	c.zk = append(c.zk, &node{id: i, port: ports[i].client, jvm: jvm{
		name:    name,
		detach:  c.opts.Detach,
		logPath: filepath.Join(dir, "zookeeper.log"),
		args:    append(flags, "-cp", cp, "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg),
	}})
	return nil
}

// portOf is the port of a host:port.
func portOf(hostport string) string {
	_, port, _ := net.SplitHostPort(hostport)
	return port
}

// ZKServers are the client host:port of each ZooKeeper server, by server
// index (nil in KRaft mode).
func (c *Cluster) ZKServers() []string { return append([]string(nil), c.zkServers...) }

// ZKServer is the host part of the ZooKeeper connect string: every
// server's host:port joined by commas ("127.0.0.1:p1,127.0.0.1:p2,..."),
// without the chroot; one host:port for a single server; "" in KRaft mode.
// For one server's address use ZKServers.
func (c *Cluster) ZKServer() string { return strings.Join(c.zkServers, ",") }

// ZKConnect is what consumers put in zookeeper.connect: every server's
// host:port joined by commas, then the chroot ("h1:p1,h2:p2,h3:p3/kafka");
// "" for a KRaft cluster, which has no ZooKeeper.
func (c *Cluster) ZKConnect() string {
	if len(c.zkServers) == 0 {
		return ""
	}
	return c.ZKServer() + c.chroot
}

// ZooKeeperServers is the number of ZooKeeper servers (0 in KRaft mode).
func (c *Cluster) ZooKeeperServers() int { return len(c.zkServers) }

// fourLetterWord sends a ZooKeeper four-letter word to addr and returns the
// answer.
func fourLetterWord(ctx context.Context, addr, word string) (string, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = conn.SetDeadline(deadline)
	if _, err := io.WriteString(conn, word); err != nil {
		return "", err
	}
	out, err := io.ReadAll(conn)
	if err != nil && len(out) == 0 {
		return "", err
	}
	return string(out), nil
}

// parseSrvrMode reads the mode out of a srvr answer.
func parseSrvrMode(out string) (string, error) {
	if strings.Contains(out, zkNotServing) {
		return "", ErrZooKeeperNotServing
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if mode, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return strings.TrimSpace(mode), nil
		}
	}
	return "", fmt.Errorf("testcluster: no Mode in the srvr answer %q", out)
}

// zkServerAddr returns the client host:port of server i, or an error.
func (c *Cluster) zkServerAddr(i int) (string, error) {
	if c.kraft {
		return "", ErrNoZooKeeper
	}
	if i < 0 || i >= len(c.zkServers) {
		return "", fmt.Errorf("testcluster: no ZooKeeper server %d (the cluster has %d)", i, len(c.zkServers))
	}
	return c.zkServers[i], nil
}

// ZooKeeperServerMode asks ZooKeeper server i (by index) for its mode with
// the srvr four-letter word: "leader", "follower", "observer" or
// "standalone" while it serves clients; ErrZooKeeperNotServing while it
// runs but does not (it looks for a leader or syncs with one); another
// error when it does not answer (killed, paused, still starting).
func (c *Cluster) ZooKeeperServerMode(ctx context.Context, i int) (string, error) {
	addr, err := c.zkServerAddr(i)
	if err != nil {
		return "", err
	}
	out, err := fourLetterWord(ctx, addr, "srvr")
	if err != nil {
		return "", fmt.Errorf("testcluster: ZooKeeper server %d (%s) does not answer: %w", i, addr, err)
	}
	mode, err := parseSrvrMode(out)
	if err != nil {
		return "", fmt.Errorf("ZooKeeper server %d (%s): %w", i, addr, err)
	}
	return mode, nil
}

// zkModes asks every server for its mode; a server that does not answer
// or does not serve has mode "". A server this process paused or killed
// is not asked (a paused one would keep the question waiting).
func (c *Cluster) zkModes(ctx context.Context) []string {
	modes := make([]string, len(c.zkServers))
	for i := range c.zkServers {
		if len(c.zk) > 0 {
			c.mu.Lock()
			paused := c.zkPaused[i]
			c.mu.Unlock()
			if paused || !c.zk[i].running() {
				continue
			}
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		modes[i], _ = c.ZooKeeperServerMode(qctx, i)
		cancel()
	}
	return modes
}

// ZooKeeperLeader returns the index of the server that leads the ensemble,
// retrying while an election runs (until one server, and only one, says
// "leader") or ctx ends. A single server leads itself: its index is 0.
func (c *Cluster) ZooKeeperLeader(ctx context.Context) (int, error) {
	if c.kraft {
		return 0, ErrNoZooKeeper
	}
	for {
		modes := c.zkModes(ctx)
		leader, leaders := -1, 0
		for i, m := range modes {
			if m == "leader" || m == "standalone" {
				leader = i
				leaders++
			}
		}
		if leaders == 1 {
			return leader, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("testcluster: no single ZooKeeper leader (modes by server: %q): %w", modes, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WaitZooKeeperQuorum waits until ZooKeeper serves: one leader elected and
// every server this process runs, and has not paused or isolated,
// serving as its leader or follower (a single server: serving
// standalone). Servers that are killed, paused or isolated are not waited
// for, but a majority must be up for a leader to exist.
func (c *Cluster) WaitZooKeeperQuorum(ctx context.Context) error {
	if c.kraft {
		return ErrNoZooKeeper
	}
	return c.waitQuorum(ctx, false)
}

// waitQuorum is WaitZooKeeperQuorum; at start-up, a server that exits is
// a failure.
func (c *Cluster) waitQuorum(ctx context.Context, startup bool) error {
	for {
		modes := c.zkModes(ctx)
		leaders, waiting := 0, 0
		for i, m := range modes {
			switch {
			case m == "leader" || m == "standalone":
				leaders++
			case m == "follower" || m == "observer":
			case c.expectServing(i):
				waiting++
			}
		}
		if leaders == 1 && waiting == 0 {
			return nil
		}
		if startup {
			if err := c.zkExited(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testcluster: ZooKeeper does not serve (modes by server: %q): %w%s", modes, ctx.Err(), c.zkLogHint())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// expectServing reports whether server i should serve: it runs, and is
// neither paused nor isolated. A server of a cluster named by the
// environment is always expected to.
func (c *Cluster) expectServing(i int) bool {
	if len(c.zk) == 0 {
		return true
	}
	c.mu.Lock()
	paused := c.zkPaused[i]
	c.mu.Unlock()
	return c.zk[i].running() && !paused && (c.quorum == nil || !c.quorum.isIsolated(i))
}

// zkExited returns an error naming the first server that exited.
func (c *Cluster) zkExited() error {
	for _, z := range c.zk {
		if !z.running() {
			return fmt.Errorf("testcluster: %s exited during start-up; see %s", z.name, z.logPath)
		}
	}
	return nil
}

func (c *Cluster) zkLogHint() string {
	if len(c.zk) == 0 {
		return ""
	}
	logs := make([]string, len(c.zk))
	for i, z := range c.zk {
		logs[i] = z.logPath
	}
	return "; see " + strings.Join(logs, ", ")
}

// waitZooKeeperServing waits until server i serves clients.
func (c *Cluster) waitZooKeeperServing(ctx context.Context, i int) error {
	for {
		_, err := c.ZooKeeperServerMode(ctx, i)
		if err == nil {
			return nil
		}
		if !c.zk[i].running() {
			return fmt.Errorf("testcluster: %s exited; see %s", c.zk[i].name, c.zk[i].logPath)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testcluster: ZooKeeper server %d does not serve: %w (last answer: %v); see %s", i, ctx.Err(), err, c.zk[i].logPath)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
