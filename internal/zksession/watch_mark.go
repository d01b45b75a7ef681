package zksession

import "sync"

// WatchMark marks what a Session has heard of one node's watches: it
// changes whenever a watch event of the node (changed, deleted, created,
// children changed, lost) reaches the session, and with every new session.
// Two equal marks, one taken before a read with a watch (GetW) and one
// taken later, prove that no event of the node arrived in between: the
// node is as that read saw it, as far as this client can know.
// go-zookeeper hands a watch event to the Session before it delivers any
// answer that came after it on the connection, so an answer read after
// the later mark was sent after the server reported every change before
// it.
type WatchMark struct {
	session int64
	events  uint64
}

// pathEvents counts the watch events of each path (a server path) that
// one link has received.
type pathEvents struct {
	mu     sync.Mutex
	counts map[string]uint64
}

func (p *pathEvents) note(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.counts == nil {
		p.counts = map[string]uint64{}
	}
	p.counts[path]++
}

func (p *pathEvents) count(path string) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[path]
}

// WatchMark returns the mark of the node at path (relative to the chroot)
// in the current session. With no session, or an invalid path, it returns
// a mark that equals no mark taken in a session.
func (s *Session) WatchMark(path string) WatchMark {
	full, err := s.fullPath(path)
	if err != nil {
		return WatchMark{}
	}
	s.mu.Lock()
	l := s.cur
	s.mu.Unlock()
	if l == nil {
		return WatchMark{}
	}
	id := l.established.Load()
	if id == 0 || l.retired.Load() {
		return WatchMark{}
	}
	return WatchMark{session: id, events: l.watchEvents.count(full)}
}
