package connector

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/abortdial"

	"github.com/IBM/sarama"
	"github.com/go-zookeeper/zk"
)

// Dialer opens the network connections of a connector (WithDialer).
// *net.Dialer satisfies it, as do SOCKS5 dialers such as
// golang.org/x/net/proxy's (through their DialContext) and the dialers of
// test harnesses that route connections through fault-injecting proxies.
//
// The context bounds the dial only: a connection returned must outlive it,
// as net.Dialer's do. The connector gives it a deadline: socket.timeout.ms
// for a broker; for a ZooKeeper server, the session timeout's share per
// server (at least a second), as ZooKeeper's Java client does.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// WithDialer makes the connector open every network connection through d:
// its ZooKeeper session, the fetchers, the leader finder and the offset
// lookups, the offsets coordinator of offsets.storage=kafka and, with
// zkconsumer.group.coordination=kafka, the broker listing and the group
// coordinator. Where TLS is configured (security.protocol SSL or
// SASL_SSL, zookeeper.ssl.client.enable), the handshake runs over d's
// connections. Use it to reach the cluster through a proxy (SOCKS5, an
// SSH tunnel), to set socket options, or in tests to cut or delay the
// connector's traffic. A nil d, the default, dials directly.
//
// A dialer that fails every dial makes New fail in ZooKeeper mode once
// zookeeper.connection.timeout.ms has passed, with an error that wraps
// ErrConnectionTimeout and ends with the dialer's last error. In Kafka
// mode New connects to nothing: CreateMessageStreams retries the join
// until its context ends, then fails with the dialer's last error.
func WithDialer(d Dialer) Option { return func(o *options) { o.dialer = d } }

// zooKeeperDialer adapts d to the ZooKeeper client's dialer, whose timeout
// becomes the context's deadline (none for a timeout of 0); a nil d gives
// nil, go-zookeeper's own dialer.
func zooKeeperDialer(d Dialer) zk.Dialer {
	if d == nil {
		return nil
	}
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		ctx := context.Background()
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		return d.DialContext(ctx, network, address)
	}
}

// saramaDialer adapts d to sarama's proxy dialer
// (sarama.Config.Net.Proxy.Dialer), with the dial timeout applied.
type saramaDialer struct {
	d       Dialer
	timeout time.Duration
}

// Dial connects to address within the dial timeout.
func (s saramaDialer) Dial(network, address string) (net.Conn, error) {
	return s.DialContext(context.Background(), network, address)
}

// DialContext connects to address within the dial timeout; ctx can end
// the dial earlier.
func (s saramaDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	return s.d.DialContext(ctx, network, address)
}

// useDialer makes sc connect through d (nil: leave sc as it is). Security
// settings applied afterwards (secure.Client.Apply) wrap it.
func useDialer(sc *sarama.Config, d Dialer) {
	if d == nil {
		return
	}
	sc.Net.Proxy.Enable = true
	sc.Net.Proxy.Dialer = saramaDialer{d: d, timeout: sc.Net.DialTimeout}
}

// errOffsetsClientClosed fails dials of an offsets client that was closed.
var errOffsetsClientClosed = errors.New("connector: offsets client closed")

// resettable makes sc dial through an abortdial.Dialer (on top of the
// dialer useDialer set, if any) and returns it, so that its connections
// can be reset.
func resettable(sc *sarama.Config) *abortdial.Dialer {
	var d *abortdial.Dialer
	if sc.Net.Proxy.Enable && sc.Net.Proxy.Dialer != nil {
		d = abortdial.Through(sc.Net.Proxy.Dialer, errOffsetsClientClosed)
	} else {
		d = abortdial.New(sc.Net.DialTimeout, 0, errOffsetsClientClosed)
	}
	sc.Net.Proxy.Enable, sc.Net.Proxy.Dialer = true, d
	return d
}
