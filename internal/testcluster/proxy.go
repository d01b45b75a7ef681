package testcluster

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// ProxyMode is what a Proxy does with traffic.
type ProxyMode int

const (
	// Forward passes bytes both ways.
	Forward ProxyMode = iota
	// Blackhole holds connections open but passes no bytes, like a
	// network partition; bytes resume flowing when Forward is set again.
	Blackhole
	// Refuse resets new connections at once; existing ones keep forwarding.
	Refuse
)

// Proxy is a TCP relay on 127.0.0.1 for cutting, stalling and resetting a
// client's connections to one server.
type Proxy struct {
	target string
	ln     net.Listener

	mu    sync.Mutex
	cond  *sync.Cond
	mode  ProxyMode
	delay time.Duration
	conns map[net.Conn]struct{}

	wg     sync.WaitGroup
	closed bool
}

// NewProxy listens on a free loopback port and relays to target.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetMode switches the proxy's behaviour.
func (p *Proxy) SetMode(m ProxyMode) {
	p.mu.Lock()
	p.mode = m
	p.mu.Unlock()
	p.cond.Broadcast()
}

// SetDelay delays every chunk of bytes relayed by d.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// ResetAll ends every open connection with a TCP reset.
func (p *Proxy) ResetAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		resetConn(c)
	}
}

// Close stops the proxy and ends its connections.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.cond.Broadcast()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.mode == Refuse || p.closed
		p.mu.Unlock()
		if refuse {
			resetConn(client)
			continue
		}
		server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			resetConn(client)
			continue
		}
		if !p.track(client, server) {
			client.Close()
			server.Close()
			return
		}
		p.wg.Add(2)
		go p.pump(client, server)
		go p.pump(server, client)
	}
}

func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}

// pump copies src to dst, holding bytes while the proxy blackholes.
func (p *Proxy) pump(dst, src net.Conn) {
	defer p.wg.Done()
	defer func() {
		dst.Close()
		src.Close()
		p.untrack(dst, src)
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.mode == Blackhole && !p.closed {
				p.cond.Wait()
			}
			closed, delay := p.closed, p.delay
			p.mu.Unlock()
			if closed {
				return
			}
			if delay > 0 {
				time.Sleep(delay)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				resetConn(dst)
			}
			return
		}
	}
}
