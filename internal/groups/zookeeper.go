package groups

import (
	"context"
	"fmt"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/secure"
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
// answers, with an error naming the hosts and the last dial error. Every
// path used with the returned session is relative to the chroot; the
// caller closes it. sec supplies the ZooKeeper credentials, ACL and TLS
// settings (zookeeper.auth, zookeeper.set.acl, zookeeper.ssl.*).
func OpenZooKeeper(ctx context.Context, connect string, timeout time.Duration, sec secure.Settings) (*zkutil.Session, error) {
	dial, err := secure.ZooKeeperDialer(sec, nil)
	if err != nil {
		return nil, fmt.Errorf("groups: %w", err)
	}
	s, err := zkutil.Dial(ctx, zkutil.SessionConfig{
		Connect:           connect,
		SessionTimeout:    sessionTimeout,
		ConnectionTimeout: timeout,
		Dialer:            dial,
		Auth:              secure.ZooKeeperCredentials(sec),
		ACL:               secure.ZooKeeperACL(sec),
		OpenACLPaths:      []string{zkutil.ConsumersPath},
	})
	if err != nil {
		return nil, fmt.Errorf("groups: cannot reach ZooKeeper: %w", err)
	}
	if s.Chroot() != "" {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		ok, _, err := s.Exists(ctx, "/")
		if err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("groups: check chroot %s: %w", s.Chroot(), err)
		}
		if !ok {
			_ = s.Close()
			return nil, fmt.Errorf("%w: %s (check the path after the ZooKeeper hosts)", ErrNoChroot, s.Chroot())
		}
	}
	return s, nil
}
