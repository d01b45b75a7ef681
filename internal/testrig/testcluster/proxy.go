package testcluster

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// ProxyMode is what a Proxy does with traffic.
type ProxyMode int

const (
	// Forward passes bytes both ways.
	Forward ProxyMode = iota
	// Blackhole is a network partition between the proxy's clients and
	// its target: nothing gets through, nothing is closed. The proxy keeps
	// reading both sides (up to 1 MiB per direction, then it stops reading)
	// and, when Forward is set again, delivers what it holds, in order,
	// followed by a sender's FIN if the sender closed cleanly meanwhile. A
	// sender that aborted its connection (a TCP reset, or a close that
	// discarded unsent data) loses what it had sent into the partition: the
	// other side gets a reset instead. A connection opened during the
	// partition reaches the target only once it heals, and not at all if
	// the client gave up first.
	Blackhole
	// Refuse resets new connections at once; existing ones keep forwarding.
	Refuse
)

// String names the mode.
func (m ProxyMode) String() string {
	switch m {
	case Forward:
		return "forward"
	case Blackhole:
		return "blackhole"
	case Refuse:
		return "refuse"
	}
	return fmt.Sprintf("ProxyMode(%d)", int(m))
}

// Proxy is a TCP relay on 127.0.0.1 for cutting, stalling and resetting a
// client's connections to one server.
type Proxy struct {
	target string
	ln     net.Listener

	mu     sync.Mutex
	mode   ProxyMode
	delay  time.Duration
	links  map[*link]struct{}
	closed bool

	wg sync.WaitGroup
}

// ErrProxyTarget is returned by NewProxy for a target that is not one
// host:port, such as a ZooKeeper connect string listing several servers.
var ErrProxyTarget = errors.New("testcluster: a proxy relays to one host:port (for a ZooKeeper ensemble use Cluster.NewZooKeeperProxies, for several servers NewProxySet)")

// NewProxy listens on a free loopback port and relays to target, one
// host:port.
func NewProxy(target string) (*Proxy, error) {
	if _, _, err := net.SplitHostPort(target); err != nil || strings.ContainsAny(target, ",/") {
		return nil, fmt.Errorf("%w: got %q", ErrProxyTarget, target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, ln: ln, links: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target is the host:port the proxy relays to.
func (p *Proxy) Target() string { return p.target }

// Mode is the proxy's current mode.
func (p *Proxy) Mode() ProxyMode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// SetMode switches the proxy's behaviour, for open connections too.
func (p *Proxy) SetMode(m ProxyMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = m
	for l := range p.links {
		l.setHeld(m == Blackhole)
	}
}

// SetDelay delays every chunk of bytes relayed by d.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
	for l := range p.links {
		l.setDelay(d)
	}
}

// ResetAll ends every open connection with a TCP reset, on both sides.
func (p *Proxy) ResetAll() {
	p.mu.Lock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.reset()
	}
}

// Close stops the proxy and ends its connections. It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	for _, l := range links {
		l.close()
	}
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	dial := func() (net.Conn, error) { return net.DialTimeout("tcp", p.target, 5*time.Second) }
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.closed || p.mode == Refuse {
			p.mu.Unlock()
			resetConn(client)
			continue
		}
		l := newLink(client, dial, nil, p.mode == Blackhole, p.delay, &p.wg, p.untrack)
		p.links[l] = struct{}{}
		p.mu.Unlock()
	}
}

func (p *Proxy) untrack(l *link) {
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
}

// heldBytes is how many bytes the proxy holds, over all its connections.
func (p *Proxy) heldBytes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for l := range p.links {
		n += l.heldBytes()
	}
	return n
}
