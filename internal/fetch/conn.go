package fetch

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"

	"github.com/IBM/sarama"
)

// dialer is the only way sarama.Broker connects for this package. It ties
// every connection to a context: when the context ends the connection is
// closed, which is the one way to interrupt a sarama.Broker blocked in a
// round trip (sarama holds the broker's lock until the response has been
// read, so Broker.Close would wait for it). It also applies
// socket.receive.buffer.bytes before connecting, sets up TLS itself, and
// keeps the connection it made (conn) so that the fetcher can send fetch
// requests and read their responses itself (see wireConn).
type dialer struct {
	ctx    context.Context
	rcvBuf int
	// proxy is the user's own dialer (Config.Sarama.Net.Proxy), if any.
	proxy interface {
		Dial(network, addr string) (net.Conn, error)
	}
	direct net.Dialer
	// tls, if set, is the TLS configuration the connection is wrapped in
	// (Config.Sarama.Net.TLS, which the dialer applies instead of sarama).
	tls *tls.Config
	// read, if set, counts the bytes read from the connections.
	read *atomic.Int64
	// conn is the last connection made, as sarama uses it (TLS included).
	conn net.Conn
}

// Dial connects to addr; sarama calls it from Broker.Open.
func (d *dialer) Dial(network, addr string) (net.Conn, error) {
	var (
		c   net.Conn
		err error
	)
	switch p := d.proxy.(type) {
	case nil:
		c, err = d.direct.DialContext(d.ctx, network, addr)
	case interface {
		DialContext(ctx context.Context, network, addr string) (net.Conn, error)
	}:
		c, err = p.DialContext(d.ctx, network, addr)
	default:
		c, err = p.Dial(network, addr)
	}
	if err != nil {
		return nil, err
	}
	if d.proxy != nil && d.rcvBuf > 0 {
		// A proxy dialer connected without our Control hook: the best we
		// can do is to set the buffer now (Linux then no longer scales
		// the window beyond what was negotiated at connect). A TLS dialer
		// (Config.Sarama's security settings) returns the *tls.Conn around
		// the TCP connection.
		raw := c
		if w, ok := c.(interface{ NetConn() net.Conn }); ok {
			raw = w.NetConn()
		}
		if tc, ok := raw.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(d.rcvBuf)
		}
	}
	if d.tls != nil {
		tc := tls.Client(c, serverNameTLS(addr, d.tls))
		if err := tc.HandshakeContext(d.ctx); err != nil {
			_ = c.Close()
			return nil, err
		}
		c = tc
	}
	stop := context.AfterFunc(d.ctx, func() { _ = c.Close() })
	var out net.Conn = &ctxConn{Conn: c, stop: stop}
	if d.read != nil {
		out = &countingConn{ctxConn{Conn: c, stop: stop}, d.read}
	}
	d.conn = out
	return out, nil
}

// serverNameTLS returns cfg with ServerName set to addr's host when cfg has
// none, as sarama does.
func serverNameTLS(addr string, cfg *tls.Config) *tls.Config {
	if cfg.ServerName != "" {
		return cfg
	}
	c := cfg.Clone()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		c.ServerName = host
	}
	return c
}

// rcvBufControl returns a net.Dialer Control function that sets the socket
// receive buffer to size before the connection is made, so that the TCP
// window scale negotiated in the handshake fits it. size <= 0 returns nil:
// the operating system's default, which on Linux keeps receive-buffer
// autotuning on (any explicit SO_RCVBUF turns it off for the socket).
func rcvBufControl(size int) func(network, address string, c syscall.RawConn) error {
	if size <= 0 {
		return nil
	}
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = setRcvBuf(fd, size)
		})
		if err != nil {
			return err
		}
		// A refused size is not fatal: the connection works with the
		// default buffer, as Kafka's consumer does.
		_ = serr
		return nil
	}
}

// ctxConn is a connection that its dialer's context closes.
type ctxConn struct {
	net.Conn
	stop func() bool
}

// countingConn is a ctxConn that counts the bytes read from it.
type countingConn struct {
	ctxConn
	read *atomic.Int64
}

// Read reads from the connection and counts the bytes.
func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// Close releases the context hook and closes the connection.
func (c *ctxConn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// openBroker connects to addr and waits until the connection, including
// sarama's ApiVersions exchange and any SASL handshake, is up. The
// connection is closed as soon as ctx ends. base is not modified. If read is
// not nil, the bytes read from the connection are added to it.
func openBroker(ctx context.Context, addr string, base *sarama.Config, rcvBuf int, read *atomic.Int64) (*sarama.Broker, error) {
	b, _, err := openBrokerConn(ctx, addr, base, rcvBuf, read)
	return b, err
}

// openBrokerConn is openBroker that also returns the connection sarama
// talks over, for a fetcher's own requests (see wireConn).
func openBrokerConn(ctx context.Context, addr string, base *sarama.Config, rcvBuf int, read *atomic.Int64) (*sarama.Broker, net.Conn, error) {
	conf := *base
	d := &dialer{
		ctx:    ctx,
		rcvBuf: rcvBuf,
		read:   read,
		direct: net.Dialer{
			Timeout:   conf.Net.DialTimeout,
			KeepAlive: conf.Net.KeepAlive,
			LocalAddr: conf.Net.LocalAddr,
			Control:   rcvBufControl(rcvBuf),
		},
	}
	if conf.Net.Proxy.Enable && conf.Net.Proxy.Dialer != nil {
		d.proxy = conf.Net.Proxy.Dialer
	}
	if conf.Net.TLS.Enable {
		d.tls = conf.Net.TLS.Config
		if d.tls == nil {
			d.tls = &tls.Config{}
		}
		conf.Net.TLS.Enable = false
	}
	conf.Net.Proxy.Enable = true
	conf.Net.Proxy.Dialer = d
	b := sarama.NewBroker(addr)
	if err := b.Open(&conf); err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", addr, explain(base, err))
	}
	// Connected waits for Open's goroutine: it takes the broker's lock,
	// which that goroutine holds until the connection is up or has failed.
	ok, err := b.Connected()
	if !ok {
		_ = b.Close()
		if err == nil {
			err = sarama.ErrNotConnected
		}
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return nil, nil, fmt.Errorf("connect to %s: %w", addr, explain(base, err))
	}
	return b, d.conn, nil
}

// explain lets the security layer that installed base's proxy dialer (see
// Config.Sarama) add the setting to fix to a failed connection's error.
func explain(base *sarama.Config, err error) error {
	if e, ok := base.Net.Proxy.Dialer.(interface{ Explain(error) error }); ok && base.Net.Proxy.Enable {
		return e.Explain(err)
	}
	return err
}
