package zksession

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"
)

// maxRaceRetries bounds the loops that chase concurrent creators and
// deleters (a parent deleted between creating it and its child, a node
// deleted between a failed create and the read that follows).
const maxRaceRetries = 10

// Stat is the metadata of a znode.
type Stat struct {
	// Czxid and Mzxid are the transaction ids that created and last
	// modified the node; Pzxid the one that last changed its children.
	Czxid, Mzxid, Pzxid int64
	// Ctime and Mtime are when the node was created and last modified.
	Ctime, Mtime time.Time
	// Version counts changes to the data, Cversion to the children,
	// Aversion to the ACL.
	Version, Cversion, Aversion int32
	// EphemeralOwner is the session id owning an ephemeral node; 0 for a
	// persistent node.
	EphemeralOwner int64
	// DataLength is the length of the data; NumChildren the number of
	// children.
	DataLength, NumChildren int32
}

func statFrom(st *zk.Stat) Stat {
	if st == nil {
		return Stat{}
	}
	return Stat{
		Czxid: st.Czxid, Mzxid: st.Mzxid, Pzxid: st.Pzxid,
		Ctime: time.UnixMilli(st.Ctime), Mtime: time.UnixMilli(st.Mtime),
		Version: st.Version, Cversion: st.Cversion, Aversion: st.Aversion,
		EphemeralOwner: st.EphemeralOwner,
		DataLength:     st.DataLength, NumChildren: st.NumChildren,
	}
}

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

// Sync makes the reads this session sends after it see every write
// ZooKeeper applied before it (ZooKeeper's sync: the server the session is
// connected to catches up with the leader). Without it, a session served by
// a follower may read a node as it was before another client's write that
// has already been acknowledged.
func (s *Session) Sync(ctx context.Context, path string) error {
	full, err := s.fullPath(path)
	if err != nil {
		return s.opError("sync", path, err)
	}
	err = s.do(ctx, func(_ context.Context, c zkConn, _ bool) error {
		_, err := c.Sync(full)
		return err
	})
	if err != nil {
		return s.opError("sync", path, err)
	}
	return nil
}

// Get returns the data and Stat of the node at path.
func (s *Session) Get(ctx context.Context, path string) ([]byte, Stat, error) {
	full, err := s.fullPath(path)
	if err != nil {
		return nil, Stat{}, s.opError("get", path, err)
	}
	var data []byte
	var st *zk.Stat
	err = s.do(ctx, func(_ context.Context, c zkConn, _ bool) (err error) {
		data, st, err = c.Get(full)
		return err
	})
	if err != nil {
		return nil, Stat{}, s.opError("get", path, err)
	}
	return data, statFrom(st), nil
}

// GetW is Get that also sets a watch on the node: NodeDataChanged or
// NodeDeleted. It fails with ErrNoNode, and sets no watch, when the node
// does not exist.
func (s *Session) GetW(ctx context.Context, path string) ([]byte, Stat, <-chan WatchEvent, error) {
	full, err := s.fullPath(path)
	if err != nil {
		return nil, Stat{}, nil, s.opError("get", path, err)
	}
	var data []byte
	var st *zk.Stat
	var ch <-chan zk.Event
	err = s.do(ctx, func(_ context.Context, c zkConn, _ bool) (err error) {
		data, st, ch, err = c.GetW(full)
		return err
	})
	if err != nil {
		return nil, Stat{}, nil, s.opError("get", path, err)
	}
	return data, statFrom(st), s.watch(ch), nil
}

// Children returns the names of the children of the node at path, in the
// server's order.
func (s *Session) Children(ctx context.Context, path string) ([]string, error) {
	full, err := s.fullPath(path)
	if err != nil {
		return nil, s.opError("children", path, err)
	}
	var children []string
	err = s.do(ctx, func(_ context.Context, c zkConn, _ bool) (err error) {
		children, _, err = c.Children(full)
		return err
	})
	if err != nil {
		return nil, s.opError("children", path, err)
	}
	return children, nil
}

// ChildrenW is Children that also sets a watch on the node:
// NodeChildrenChanged or NodeDeleted. It fails with ErrNoNode, and sets no
// watch, when the node does not exist.
func (s *Session) ChildrenW(ctx context.Context, path string) ([]string, <-chan WatchEvent, error) {
	full, err := s.fullPath(path)
	if err != nil {
		return nil, nil, s.opError("children", path, err)
	}
	var children []string
	var ch <-chan zk.Event
	err = s.do(ctx, func(_ context.Context, c zkConn, _ bool) (err error) {
		children, _, ch, err = c.ChildrenW(full)
		return err
	})
	if err != nil {
		return nil, nil, s.opError("children", path, err)
	}
	return children, s.watch(ch), nil
}

// Exists reports whether the node at path exists, and its Stat if so.
func (s *Session) Exists(ctx context.Context, path string) (bool, Stat, error) {
	full, err := s.fullPath(path)
	if err != nil {
		return false, Stat{}, s.opError("exists", path, err)
	}
	var ok bool
	var st *zk.Stat
	err = s.do(ctx, func(_ context.Context, c zkConn, _ bool) (err error) {
		ok, st, err = c.Exists(full)
		return err
	})
	if err != nil {
		return false, Stat{}, s.opError("exists", path, err)
	}
	if !ok {
		return false, Stat{}, nil
	}
	return true, statFrom(st), nil
}

// ExistsW is Exists that also sets a watch: NodeCreated when the node does
// not exist; NodeDataChanged or NodeDeleted when it does.
func (s *Session) ExistsW(ctx context.Context, path string) (bool, Stat, <-chan WatchEvent, error) {
	full, err := s.fullPath(path)
	if err != nil {
		return false, Stat{}, nil, s.opError("exists", path, err)
	}
	var ok bool
	var st *zk.Stat
	var ch <-chan zk.Event
	err = s.do(ctx, func(_ context.Context, c zkConn, _ bool) (err error) {
		ok, st, ch, err = c.ExistsW(full)
		return err
	})
	if err != nil {
		return false, Stat{}, nil, s.opError("exists", path, err)
	}
	if !ok {
		return false, Stat{}, s.watch(ch), nil
	}
	return true, statFrom(st), s.watch(ch), nil
}

// CreateEphemeral creates an ephemeral node at path holding data, creating
// missing parents as persistent nodes with no data (null, as Kafka's
// ZkClient does). The node is deleted when the session ends.
//
// It fails with ErrNodeExists when the node exists, except when it is an
// ephemeral node of the current session holding exactly data: that is the
// node this call (or an earlier one) created, for instance by a create
// applied on the server just before the connection dropped and then
// retried. (Kafka's ZKCheckedEphemeral makes the same check; its older
// createEphemeralPathExpectConflict accepted equal data from any session,
// which mistakes a node about to vanish with an expired session for ours.)
func (s *Session) CreateEphemeral(ctx context.Context, path string, data []byte) error {
	return s.create(ctx, path, data, zk.FlagEphemeral)
}

// CreatePersistent creates a persistent node at path holding data,
// creating missing parents as persistent nodes with no data. It fails with
// ErrNodeExists when the node exists, except after a connection loss during
// this call when the node holds exactly data: then the create lost its
// answer, not its effect.
func (s *Session) CreatePersistent(ctx context.Context, path string, data []byte) error {
	return s.create(ctx, path, data, zk.FlagPersistent)
}

func (s *Session) create(ctx context.Context, path string, data []byte, flags int32) error {
	full, err := s.fullPath(path)
	if err != nil {
		return s.opError("create", path, err)
	}
	err = s.do(ctx, func(ctx context.Context, c zkConn, retried bool) error {
		for i := 0; ; i++ {
			err := s.createWithParents(ctx, c, full, data, flags)
			if !errors.Is(err, zk.ErrNodeExists) {
				return err
			}
			got, st, gerr := c.Get(full)
			if errors.Is(gerr, zk.ErrNoNode) && i < maxRaceRetries {
				continue // deleted in between: create again
			}
			if gerr != nil {
				return gerr
			}
			if !bytes.Equal(got, data) {
				return err
			}
			if flags == zk.FlagEphemeral && st.EphemeralOwner == c.SessionID() {
				return nil
			}
			if flags == zk.FlagPersistent && retried && st.EphemeralOwner == 0 {
				return nil
			}
			return err
		}
	})
	return s.opError("create", path, err)
}

// createWithParents creates full; when its parent is missing it creates
// the parents (persistent, null data, s.acl) and tries again.
func (s *Session) createWithParents(ctx context.Context, c zkConn, full string, data []byte, flags int32) error {
	for i := 0; ; i++ {
		if i > 0 {
			// An abandoned call writes nothing more once ctx has ended.
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		_, err := c.Create(full, data, flags, s.aclFor(full))
		if !errors.Is(err, zk.ErrNoNode) || i >= maxRaceRetries {
			return err
		}
		parent := parentPath(full)
		if parent == "/" {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		perr := s.createWithParents(ctx, c, parent, nil, zk.FlagPersistent)
		if perr != nil && !errors.Is(perr, zk.ErrNodeExists) {
			return perr
		}
	}
}

// aclFor is the ACL of a node the Session creates at full, a server path.
func (s *Session) aclFor(full string) []zk.ACL {
	for _, p := range s.cfg.OpenACLPaths {
		if q, err := s.fullPath(p); err == nil && q == full {
			return zk.WorldACL(zk.PermAll)
		}
	}
	return s.acl
}

// EnsurePath makes sure a persistent node exists at path, creating it and
// its parents with no data if needed (Kafka's
// makeSurePersistentPathExists). With a chroot, "/" stands for the chroot,
// which EnsurePath creates too when it is missing.
func (s *Session) EnsurePath(ctx context.Context, path string) error {
	full, err := s.fullPath(path)
	if err != nil {
		return s.opError("ensure path", path, err)
	}
	if full == "/" {
		return nil
	}
	err = s.do(ctx, func(ctx context.Context, c zkConn, _ bool) error {
		ok, _, err := c.Exists(full)
		if err != nil || ok {
			return err
		}
		err = s.createWithParents(ctx, c, full, nil, zk.FlagPersistent)
		if errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		return err
	})
	return s.opError("ensure path", path, err)
}

// SetOrCreate sets the data of the persistent node at path, creating it and
// its parents when it does not exist (Kafka's updatePersistentPath). A node
// created concurrently by someone else is then set.
func (s *Session) SetOrCreate(ctx context.Context, path string, data []byte) error {
	full, err := s.fullPath(path)
	if err != nil {
		return s.opError("set or create", path, err)
	}
	err = s.do(ctx, func(ctx context.Context, c zkConn, _ bool) error {
		for i := 0; ; i++ {
			_, err := c.Set(full, data, -1)
			if !errors.Is(err, zk.ErrNoNode) {
				return err
			}
			err = s.createWithParents(ctx, c, full, data, zk.FlagPersistent)
			if !errors.Is(err, zk.ErrNodeExists) || i >= maxRaceRetries {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	})
	return s.opError("set or create", path, err)
}

// Set sets the data of the node at path if its version is version (-1:
// any), and returns the new Stat. It fails with ErrNoNode or ErrBadVersion.
// When the connection dropped during the call and the retry finds the
// version one higher with exactly data, the first attempt was applied and
// Set succeeds.
func (s *Session) Set(ctx context.Context, path string, data []byte, version int32) (Stat, error) {
	full, err := s.fullPath(path)
	if err != nil {
		return Stat{}, s.opError("set", path, err)
	}
	var st *zk.Stat
	err = s.do(ctx, func(_ context.Context, c zkConn, retried bool) (err error) {
		st, err = c.Set(full, data, version)
		if errors.Is(err, zk.ErrBadVersion) && retried && version >= 0 {
			got, cur, gerr := c.Get(full)
			if gerr == nil && cur.Version == version+1 && bytes.Equal(got, data) {
				st = cur
				return nil
			}
		}
		return err
	})
	if err != nil {
		return Stat{}, s.opError("set", path, err)
	}
	return statFrom(st), nil
}

// Delete deletes the node at path if its version is version (-1: any). It
// fails with ErrNoNode, ErrBadVersion or ErrNotEmpty. When the connection
// dropped during the call and the retry finds no node, Delete succeeds:
// the node is gone, whoever deleted it.
func (s *Session) Delete(ctx context.Context, path string, version int32) error {
	full, err := s.fullPath(path)
	if err != nil {
		return s.opError("delete", path, err)
	}
	err = s.do(ctx, func(_ context.Context, c zkConn, retried bool) error {
		err := c.Delete(full, version)
		if retried && errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		return err
	})
	return s.opError("delete", path, err)
}

// DeleteEphemeral deletes the ephemeral node at path that this session
// created, if its version is version. It fails with ErrNoNode or
// ErrBadVersion, as Delete does; it differs after a connection loss. When
// the connection dropped during the call, the first attempt may have been
// applied, and another session may have created a new node at path since
// (an owner node claimed by a peer as soon as ours was gone, with the same
// version 0 a fresh node has): Delete's retry would delete that node. The
// retry of DeleteEphemeral reads the node first and deletes it only if it
// is still an ephemeral node of the session with that version; otherwise
// the node it meant is gone and it succeeds. The session is the one ctx is
// bound to (InSession), or else the one of the connection the call runs on.
func (s *Session) DeleteEphemeral(ctx context.Context, path string, version int32) error {
	full, err := s.fullPath(path)
	if err != nil {
		return s.opError("delete", path, err)
	}
	bound, isBound := ctx.Value(boundSessionKey{}).(int64)
	err = s.do(ctx, func(_ context.Context, c zkConn, retried bool) error {
		if retried {
			owner := bound
			if !isBound {
				owner = c.SessionID()
			}
			_, st, err := c.Get(full)
			switch {
			case errors.Is(err, zk.ErrNoNode):
				return nil
			case err != nil:
				return err
			case st.EphemeralOwner != owner || (version >= 0 && st.Version != version):
				return nil // not the node this call meant to delete
			}
		}
		err := c.Delete(full, version)
		if retried && errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		return err
	})
	return s.opError("delete", path, err)
}

// attempt is one try of an operation on c. retried tells that an earlier
// try failed with a lost connection, so that it may have been applied.
type attempt func(ctx context.Context, c zkConn, retried bool) error

// do runs fn until it returns something other than a connection loss, ctx
// ends or the Session closes. After a connection loss it waits for a
// session established after the try began (the same session reconnected,
// or a new one after an expiry), as ZkClient.retryUntilConnected does.
//
// An operation whose ctx is bound to a session (InSession) is sent only on
// that session's own connection, and only while the session's lease holds:
// it waits for the lease while it has lapsed, and fails with
// ErrSessionExpired once the session is gone. The connection never carries
// another session, so the operation can never be applied by the session
// that replaces its own. Other operations go to the current session, and
// are retried on the next one when theirs expires.
func (s *Session) do(ctx context.Context, fn attempt) error {
	bound, isBound := ctx.Value(boundSessionKey{}).(int64)
	retried := false
	for {
		s.mu.Lock()
		closing, gen := s.closing, s.gen
		s.mu.Unlock()
		if closing {
			return ErrClosed
		}
		var l *link
		if isBound {
			if err := s.awaitLease(ctx, bound); err != nil {
				return err
			}
			if l = s.linkOf(bound); l == nil {
				return s.goneError(bound)
			}
		} else {
			var err error
			if l, err = s.readyLink(ctx); err != nil {
				return err
			}
		}
		var err error
		if isBound {
			// Never abandoned while go-zookeeper holds the request: it
			// answers it, or fails it when the connection drops (within
			// two thirds of the session timeout) or the link shuts down.
			// So a bound operation that returned is no longer in flight,
			// and the next one of its session (a rollback, a release)
			// reaches the server after it.
			err = fn(ctx, l.conn, retried)
		} else {
			err = s.call(ctx, func() error { return fn(ctx, l.conn, retried) })
		}
		if err != nil && l.retired.Load() && !isContextError(err) && !s.isClosing() {
			// The link's session expired under the request: it failed
			// with the link (never sent on another session).
			if isBound {
				return s.goneError(bound)
			}
			err = fmt.Errorf("%w: %w", zk.ErrConnectionClosed, err)
		}
		if !isConnectionLoss(err) {
			return err
		}
		if s.isClosing() {
			return &causeError{ours: ErrClosed, theirs: err}
		}
		s.logger.Debug("ZooKeeper request lost with the connection; retrying on the next session", "error", err)
		retried = true
		if werr := s.waitSession(ctx, gen); werr != nil {
			if errors.Is(werr, ErrClosed) {
				return werr
			}
			return &causeError{ours: ErrConnectionLoss, theirs: werr,
				msg: ErrConnectionLoss.Error() + ", gave up waiting for a new connection: " + werr.Error()}
		}
	}
}

// goneError is the error of an operation bound to session id, which is gone.
func (s *Session) goneError(id int64) error {
	return fmt.Errorf("%w: the operation belongs to session %s, which is gone", ErrSessionExpired, sessionString(id))
}

// call runs f, which blocks until go-zookeeper answers or the connection
// drops, and returns its result or ctx's error, whichever comes first. An
// abandoned f finishes on its own; Close waits for it.
func (s *Session) call(ctx context.Context, f func() error) error {
	if ctx.Done() == nil {
		return f()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var err error
	done := make(chan struct{})
	if !s.goTracked(func() {
		err = f()
		close(done)
	}) {
		return ErrClosed
	}
	select {
	case <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
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

// fullPath validates a path relative to the chroot and returns the path on
// the server. "/" is the chroot itself.
func (s *Session) fullPath(path string) (string, error) {
	if reason := pathProblem(path); reason != "" {
		return "", fmt.Errorf("%w: %s", ErrInvalidPath, reason)
	}
	if s.chroot == "" {
		return path, nil
	}
	if path == "/" {
		return s.chroot, nil
	}
	return s.chroot + path, nil
}

// stripChroot turns a server path into one relative to the chroot.
func (s *Session) stripChroot(path string) string {
	if s.chroot == "" {
		return path
	}
	if path == s.chroot {
		return "/"
	}
	if strings.HasPrefix(path, s.chroot+"/") {
		return path[len(s.chroot):]
	}
	return path
}

// pathProblem explains why p is not a valid absolute ZooKeeper path, or
// returns "" (the rules of ZooKeeper's PathUtils.validatePath).
func pathProblem(p string) string {
	switch {
	case p == "":
		return "empty path"
	case p[0] != '/':
		return fmt.Sprintf("%q does not start with '/'", p)
	case p == "/":
		return ""
	case strings.HasSuffix(p, "/"):
		return fmt.Sprintf("%q ends with '/'", p)
	case !utf8.ValidString(p):
		return fmt.Sprintf("%q is not valid UTF-8", p)
	}
	for _, seg := range strings.Split(p[1:], "/") {
		switch seg {
		case "":
			return fmt.Sprintf("%q has an empty segment", p)
		case ".", "..":
			return fmt.Sprintf("%q has a relative segment %q", p, seg)
		}
	}
	for _, r := range p {
		if r == 0 || (r > 0 && r <= 0x1f) || (r >= 0x7f && r <= 0x9f) ||
			(r >= 0xd800 && r <= 0xf8ff) || (r >= 0xfff0 && r <= 0xffff) {
			return fmt.Sprintf("%q contains the character %U", p, r)
		}
	}
	return ""
}

// parentPath returns the parent of an absolute path, "/" for a top-level
// node.
func parentPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// boundSessionKey is the context key of InSession.
type boundSessionKey struct{}

// InSession returns a context that binds the operations run with it to the
// ZooKeeper session id: each attempt waits until the lease of that session
// holds (see LeaseHeld), is sent only on the connection that carries that
// session, and none runs once the session is gone. Writes that act on
// ownership held by a session (offset commits, claims and their rollback,
// releases) use it, so that a write meant for an expired session is never
// applied by its successor: the connection of a session never opens
// another one, and is closed, failing everything still queued in it, once
// its session has expired.
//
// ctx bounds the waits of a bound operation (for the lease, for a
// reconnection), not a request go-zookeeper already holds: the operation
// returns when go-zookeeper has answered the request or failed it with its
// connection, so that nothing of it is left in flight to land after what
// the caller does next in the same session (a claim's rollback after a
// create that timed out, say).
func InSession(ctx context.Context, id int64) context.Context {
	return context.WithValue(ctx, boundSessionKey{}, id)
}

// awaitLease waits until the lease of session id holds, or fails once the
// session is gone, the Session closes or ctx ends.
func (s *Session) awaitLease(ctx context.Context, id int64) error {
	for {
		ch := s.lease.changedCh()
		switch s.lease.status(id) {
		case leaseHeld:
			return nil
		case leaseGone:
			return s.goneError(id)
		}
		if s.isClosing() {
			return ErrClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return &causeError{ours: ErrConnectionLoss, theirs: ctx.Err(),
				msg: "session " + sessionString(id) + " not known to be alive: " + ctx.Err().Error()}
		case <-s.done:
			return ErrClosed
		}
	}
}
