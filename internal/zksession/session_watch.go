package zksession

import (
	"fmt"

	"github.com/go-zookeeper/zk"
)

// WatchEventType is what a one-shot watch reports.
type WatchEventType int

const (
	// NodeCreated: the node an ExistsW found missing was created.
	NodeCreated WatchEventType = iota + 1
	// NodeDeleted: the watched node was deleted.
	NodeDeleted
	// NodeDataChanged: the watched node's data was set.
	NodeDataChanged
	// NodeChildrenChanged: a child of the node was created or deleted.
	NodeChildrenChanged
	// WatchLost: the watch will never fire, because the session expired
	// (Err wraps ErrSessionExpired) or was closed (Err wraps ErrClosed).
	// The watched node may have changed meanwhile: read it again.
	WatchLost
)

// String returns the type's name, such as "NodeDataChanged".
func (t WatchEventType) String() string {
	switch t {
	case NodeCreated:
		return "NodeCreated"
	case NodeDeleted:
		return "NodeDeleted"
	case NodeDataChanged:
		return "NodeDataChanged"
	case NodeChildrenChanged:
		return "NodeChildrenChanged"
	case WatchLost:
		return "WatchLost"
	}
	return fmt.Sprintf("WatchEventType(%d)", int(t))
}

// WatchEvent is the one event of a watch. A watch channel receives exactly
// one WatchEvent and is then closed.
//
// Watches survive disconnections from a live session: go-zookeeper sets
// them again on the new connection, and ZooKeeper fires those whose node
// changed meanwhile. They are lost, with WatchLost, when the session
// expires or the Session is closed. Each pending watch holds one goroutine
// of the Session until it fires.
type WatchEvent struct {
	// Type is what happened.
	Type WatchEventType
	// Path is the watched path, relative to the chroot.
	Path string
	// Err is set for WatchLost.
	Err error
}

// watch translates a go-zookeeper watch channel into a WatchEvent channel
// with the chroot stripped from the path.
func (s *Session) watch(zch <-chan zk.Event) <-chan WatchEvent {
	out := make(chan WatchEvent, 1)
	if zch == nil {
		out <- WatchEvent{Type: WatchLost, Err: ErrClosed}
		close(out)
		return out
	}
	if !s.goTracked(func() {
		ev, ok := <-zch
		out <- s.watchEvent(ev, ok)
		close(out)
	}) {
		out <- WatchEvent{Type: WatchLost, Err: ErrClosed}
		close(out)
	}
	return out
}

func (s *Session) watchEvent(ev zk.Event, ok bool) WatchEvent {
	if !ok {
		return WatchEvent{Type: WatchLost, Err: ErrClosed}
	}
	we := WatchEvent{Path: s.stripChroot(ev.Path)}
	switch ev.Type {
	case zk.EventNodeCreated:
		we.Type = NodeCreated
	case zk.EventNodeDeleted:
		we.Type = NodeDeleted
	case zk.EventNodeDataChanged:
		we.Type = NodeDataChanged
	case zk.EventNodeChildrenChanged:
		we.Type = NodeChildrenChanged
	default:
		we.Type = WatchLost
		err := ev.Err
		if err == nil {
			err = fmt.Errorf("unexpected watch event %v", ev.Type)
		}
		we.Err = s.mapCause(err)
	}
	return we
}
