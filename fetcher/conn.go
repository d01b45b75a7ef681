package fetcher

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"

	"github.com/IBM/sarama"
)

// dialer is the only way sarama.Broker connects for this package. It ties
// every connection to a context: when the context ends the connection is
// closed, which is the one way to interrupt a sarama.Broker blocked in a
// round trip (sarama holds the broker's lock until the response has been
// read, so Broker.Close would wait for it). It also applies
// socket.receive.buffer.bytes.
type dialer struct {
	ctx    context.Context
	rcvBuf int
	// proxy is the user's own dialer (Config.Sarama.Net.Proxy), if any.
	proxy interface {
		Dial(network, addr string) (net.Conn, error)
	}
	direct net.Dialer
	// read, if set, counts the bytes read from the connections.
	read *atomic.Int64
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
	if d.rcvBuf > 0 {
		raw := c
		// A TLS dialer (Config.Sarama's proxy dialer) returns the
		// *tls.Conn around the TCP connection.
		if w, ok := c.(interface{ NetConn() net.Conn }); ok {
			raw = w.NetConn()
		}
		if tc, ok := raw.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(d.rcvBuf)
		}
	}
	stop := context.AfterFunc(d.ctx, func() { _ = c.Close() })
	if d.read != nil {
		return &countingConn{ctxConn{Conn: c, stop: stop}, d.read}, nil
	}
	return &ctxConn{Conn: c, stop: stop}, nil
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
	conf := *base
	d := &dialer{
		ctx:    ctx,
		rcvBuf: rcvBuf,
		read:   read,
		direct: net.Dialer{
			Timeout:   conf.Net.DialTimeout,
			KeepAlive: conf.Net.KeepAlive,
			LocalAddr: conf.Net.LocalAddr,
		},
	}
	if conf.Net.Proxy.Enable && conf.Net.Proxy.Dialer != nil {
		d.proxy = conf.Net.Proxy.Dialer
	}
	conf.Net.Proxy.Enable = true
	conf.Net.Proxy.Dialer = d
	b := sarama.NewBroker(addr)
	if err := b.Open(&conf); err != nil {
		return nil, fmt.Errorf("fetcher: connect to %s: %w", addr, explain(base, err))
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
		return nil, fmt.Errorf("fetcher: connect to %s: %w", addr, explain(base, err))
	}
	return b, nil
}

// explain lets the security layer that installed base's proxy dialer (see
// Config.Sarama) add the setting to fix to a failed connection's error.
func explain(base *sarama.Config, err error) error {
	if e, ok := base.Net.Proxy.Dialer.(interface{ Explain(error) error }); ok && base.Net.Proxy.Enable {
		return e.Explain(err)
	}
	return err
}
