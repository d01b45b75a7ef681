package groups

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/secure"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// sessionTimeout is the ZooKeeper session timeout of the tool's connection.
// The tool registers nothing ephemeral, so it only matters for how long the
// server keeps a vanished connection.
const sessionTimeout = 10 * time.Second

// OpenZooKeeper connects to the ZooKeeper ensemble named by connect, in
// Kafka's zookeeper.connect form "host:port[,host:port...][/chroot]", and
// checks that the chroot exists (a mistyped chroot would otherwise look
// like a cluster without groups). It fails within timeout when no server
// answers, with an error naming the hosts and the last dial error, and at
// once when every server refuses the connection (nothing listens on any of
// the ports: waiting would not help). Every
// path used with the returned session is relative to the chroot; the
// caller closes it. sec supplies the ZooKeeper credentials, ACL and TLS
// settings (zookeeper.auth, zookeeper.set.acl, zookeeper.ssl.*).
func OpenZooKeeper(ctx context.Context, connect string, timeout time.Duration, sec secure.Settings) (*zksession.Session, error) {
	dial, err := secure.ZooKeeperDialer(sec, nil)
	if err != nil {
		return nil, err
	}
	if hosts, _, err := zksession.ParseConnectString(connect); err == nil {
		if err := refusedByAll(ctx, hosts, timeout); err != nil {
			return nil, fmt.Errorf("cannot reach ZooKeeper: %w", err)
		}
	}
	s, err := zksession.Dial(ctx, zksession.SessionConfig{
		Connect:           connect,
		SessionTimeout:    sessionTimeout,
		ConnectionTimeout: timeout,
		Dialer:            dial,
		Auth:              secure.ZooKeeperCredentials(sec),
		ACL:               secure.ZooKeeperACL(sec),
		OpenACLPaths:      []string{zkutil.ConsumersPath},
	})
	if err != nil {
		return nil, fmt.Errorf("cannot reach ZooKeeper: %w", err)
	}
	if s.Chroot() != "" {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		ok, _, err := s.Exists(ctx, "/")
		if err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("check chroot %s: %w", s.Chroot(), err)
		}
		if !ok {
			_ = s.Close()
			return nil, fmt.Errorf("%w: %s (check the path after the ZooKeeper hosts)", ErrNoChroot, s.Chroot())
		}
	}
	return s, nil
}

// probeTimeout bounds the TCP probe of each server in refusedByAll.
const probeTimeout = 3 * time.Second

// refusedByAll opens a TCP connection to each of hosts at once and returns
// an error, naming them, only when every one refused it. Anything else (a
// server that accepts, one that does not answer within the probe's
// timeout, a name that does not resolve) returns nil, and the session's
// own dial decides, retrying within --timeout as before. The probe is
// TCP's alone: a TLS port refuses a connection as a plain one does.
func refusedByAll(ctx context.Context, hosts []string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, min(timeout, probeTimeout))
	defer cancel()
	errs := make(chan error, len(hosts))
	for _, h := range hosts {
		go func() {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", h)
			if err == nil {
				_ = conn.Close()
			}
			errs <- err
		}()
	}
	var last error
	refused := 0
	for range hosts {
		err := <-errs
		if errors.Is(err, syscall.ECONNREFUSED) {
			refused++
			last = err
		}
	}
	if refused < len(hosts) || len(hosts) == 0 {
		return nil
	}
	return fmt.Errorf("every ZooKeeper server refused the connection (%s); is ZooKeeper running there? last error: %w",
		strings.Join(hosts, ","), last)
}
