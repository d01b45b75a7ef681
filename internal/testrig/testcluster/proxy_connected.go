package testcluster

// Links is the number of client connections the proxy relays now.
func (p *Proxy) Links() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.links)
}

// Connected returns, in target order, the indexes of the proxies of the
// set that relay at least one connection now: for a ZooKeeper client
// behind NewZooKeeperProxies, the server it is connected to (more than one
// while it replaces a connection).
func (s *ProxySet) Connected() []int {
	var out []int
	for i, p := range s.proxies {
		if p.Links() > 0 {
			out = append(out, i)
		}
	}
	return out
}
