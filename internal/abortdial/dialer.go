package abortdial

import (
	"net"
	"sync"
	"time"
)

// Dialer dials TCP connections and keeps track of those still open, so
// that Abort can close them all. It implements sarama's proxy dialer
// (golang.org/x/net/proxy.Dialer, Config.Net.Proxy.Dialer). It is safe for
// concurrent use.
type Dialer struct {
	net     net.Dialer
	inner   Inner // nil: d.net
	aborted error

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	done  bool
}

// New returns a Dialer with the given dial timeout and TCP keep-alive
// period (0: Go's default). Dials after Abort fail with abortedErr.
func New(timeout, keepAlive time.Duration, abortedErr error) *Dialer {
	return &Dialer{net: net.Dialer{Timeout: timeout, KeepAlive: keepAlive}, aborted: abortedErr, conns: map[net.Conn]struct{}{}}
}

// Inner is a dialer that Through opens connections with: sarama's proxy
// dialer (golang.org/x/net/proxy.Dialer).
type Inner interface {
	Dial(network, addr string) (net.Conn, error)
}

// Through returns a Dialer that opens its connections with inner (which
// applies its own timeout), such as the application's dialer of a
// connector built WithDialer. Dials after Abort fail with abortedErr.
func Through(inner Inner, abortedErr error) *Dialer {
	return &Dialer{inner: inner, aborted: abortedErr, conns: map[net.Conn]struct{}{}}
}

// Dial opens a connection to addr, unless the Dialer was aborted.
func (d *Dialer) Dial(network, addr string) (net.Conn, error) {
	d.mu.Lock()
	if d.done {
		d.mu.Unlock()
		return nil, d.aborted
	}
	d.mu.Unlock()
	var c net.Conn
	var err error
	if d.inner != nil {
		c, err = d.inner.Dial(network, addr)
	} else {
		c, err = d.net.Dial(network, addr)
	}
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		_ = c.Close()
		return nil, d.aborted
	}
	tc := &trackedConn{Conn: c, d: d}
	d.conns[tc] = struct{}{}
	return tc, nil
}

// Abort closes every open connection and makes further dials fail.
func (d *Dialer) Abort() {
	d.mu.Lock()
	d.done = true
	conns := d.conns
	d.conns = map[net.Conn]struct{}{}
	d.mu.Unlock()
	for c := range conns {
		_ = c.(*trackedConn).Conn.Close()
	}
}

// Reset ends every open connection with a TCP reset (SO_LINGER 0), so
// that what the kernel has not yet delivered of them is dropped instead of
// sent after the close, and leaves the Dialer usable. Connections that are
// not TCP (an application's dialer may return others) are just closed.
func (d *Dialer) Reset() {
	d.mu.Lock()
	conns := d.conns
	d.conns = map[net.Conn]struct{}{}
	d.mu.Unlock()
	for c := range conns {
		inner := c.(*trackedConn).Conn
		if l, ok := inner.(interface{ SetLinger(int) error }); ok {
			_ = l.SetLinger(0)
		}
		_ = inner.Close()
	}
}

// trackedConn leaves its Dialer's set when closed.
type trackedConn struct {
	net.Conn
	d *Dialer
}

func (c *trackedConn) Close() error {
	c.d.mu.Lock()
	delete(c.d.conns, c)
	c.d.mu.Unlock()
	return c.Conn.Close()
}
