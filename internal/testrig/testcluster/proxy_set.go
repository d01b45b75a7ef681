package testcluster

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ProxySet is one Proxy per server of a group of servers, such as the
// servers of a ZooKeeper ensemble or the brokers of a cluster, for one
// client (or a group of clients) whose network path to them a test cuts,
// all at once or server by server.
type ProxySet struct {
	proxies []*Proxy
	chroot  string
}

// NewProxySet starts one proxy per target (host:port), in order.
func NewProxySet(targets []string) (*ProxySet, error) {
	if len(targets) == 0 {
		return nil, errors.New("testcluster: NewProxySet needs at least one target")
	}
	s := &ProxySet{}
	for _, t := range targets {
		p, err := NewProxy(t)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		s.proxies = append(s.proxies, p)
	}
	return s, nil
}

// NewZooKeeperProxies starts one proxy per ZooKeeper server of the cluster
// (in ZKServers order), for a client whose path to ZooKeeper a test cuts:
// pass Connect() as its connect string. SetMode(Blackhole) partitions the
// client from the whole ensemble; SetModeFor cuts it from one server, so
// that it fails over to the others. It works for a cluster named by the
// environment too.
func (c *Cluster) NewZooKeeperProxies() (*ProxySet, error) {
	if c.kraft {
		return nil, ErrNoZooKeeper
	}
	s, err := NewProxySet(c.ZKServers())
	if err != nil {
		return nil, err
	}
	s.chroot = c.chroot
	return s, nil
}

// Len is the number of proxies.
func (s *ProxySet) Len() int { return len(s.proxies) }

// Proxy returns the proxy in front of target i, or nil if there is none.
func (s *ProxySet) Proxy(i int) *Proxy {
	if i < 0 || i >= len(s.proxies) {
		return nil
	}
	return s.proxies[i]
}

// Addrs are the proxies' host:port, in target order.
func (s *ProxySet) Addrs() []string {
	addrs := make([]string, len(s.proxies))
	for i, p := range s.proxies {
		addrs[i] = p.Addr()
	}
	return addrs
}

// Connect is the connect string through the proxies: their host:port
// joined by commas, followed by the chroot for a set made by
// NewZooKeeperProxies ("127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3/kafka").
func (s *ProxySet) Connect() string { return strings.Join(s.Addrs(), ",") + s.chroot }

// SetMode sets every proxy's mode: Blackhole partitions the client from
// all the servers at once.
func (s *ProxySet) SetMode(m ProxyMode) {
	for _, p := range s.proxies {
		p.SetMode(m)
	}
}

// SetModeFor sets the mode of the proxy in front of target i only.
func (s *ProxySet) SetModeFor(i int, m ProxyMode) error {
	p := s.Proxy(i)
	if p == nil {
		return fmt.Errorf("testcluster: no proxy %d (the set has %d)", i, len(s.proxies))
	}
	p.SetMode(m)
	return nil
}

// SetDelay delays every chunk relayed by every proxy by d.
func (s *ProxySet) SetDelay(d time.Duration) {
	for _, p := range s.proxies {
		p.SetDelay(d)
	}
}

// ResetAll resets every open connection of every proxy.
func (s *ProxySet) ResetAll() {
	for _, p := range s.proxies {
		p.ResetAll()
	}
}

// Close stops every proxy. It is idempotent.
func (s *ProxySet) Close() error {
	var errs []error
	for _, p := range s.proxies {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}
