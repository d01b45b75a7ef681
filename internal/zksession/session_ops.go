package zksession

import (
	"bytes"
	"context"
	"errors"
	"time"

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
	err = s.do(ctx, anySession, func(_ context.Context, c zkConn, _ bool) error {
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
	return s.get(ctx, anySession, path)
}

func (s *Session) get(ctx context.Context, in binding, path string) ([]byte, Stat, error) {
	full, err := s.fullPath(path)
	if err != nil {
		return nil, Stat{}, s.opError("get", path, err)
	}
	var data []byte
	var st *zk.Stat
	err = s.do(ctx, in, func(_ context.Context, c zkConn, _ bool) (err error) {
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
	return s.getW(ctx, anySession, path)
}

func (s *Session) getW(ctx context.Context, in binding, path string) ([]byte, Stat, <-chan WatchEvent, error) {
	full, err := s.fullPath(path)
	if err != nil {
		return nil, Stat{}, nil, s.opError("get", path, err)
	}
	var data []byte
	var st *zk.Stat
	var ch <-chan zk.Event
	err = s.do(ctx, in, func(_ context.Context, c zkConn, _ bool) (err error) {
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
	return s.children(ctx, anySession, path)
}

func (s *Session) children(ctx context.Context, in binding, path string) ([]string, error) {
	full, err := s.fullPath(path)
	if err != nil {
		return nil, s.opError("children", path, err)
	}
	var children []string
	err = s.do(ctx, in, func(_ context.Context, c zkConn, _ bool) (err error) {
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
	return s.childrenW(ctx, anySession, path)
}

func (s *Session) childrenW(ctx context.Context, in binding, path string) ([]string, <-chan WatchEvent, error) {
	full, err := s.fullPath(path)
	if err != nil {
		return nil, nil, s.opError("children", path, err)
	}
	var children []string
	var ch <-chan zk.Event
	err = s.do(ctx, in, func(_ context.Context, c zkConn, _ bool) (err error) {
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
	return s.exists(ctx, anySession, path)
}

func (s *Session) exists(ctx context.Context, in binding, path string) (bool, Stat, error) {
	full, err := s.fullPath(path)
	if err != nil {
		return false, Stat{}, s.opError("exists", path, err)
	}
	var ok bool
	var st *zk.Stat
	err = s.do(ctx, in, func(_ context.Context, c zkConn, _ bool) (err error) {
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
	return s.existsW(ctx, anySession, path)
}

func (s *Session) existsW(ctx context.Context, in binding, path string) (bool, Stat, <-chan WatchEvent, error) {
	full, err := s.fullPath(path)
	if err != nil {
		return false, Stat{}, nil, s.opError("exists", path, err)
	}
	var ok bool
	var st *zk.Stat
	var ch <-chan zk.Event
	err = s.do(ctx, in, func(_ context.Context, c zkConn, _ bool) (err error) {
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
	return s.create(ctx, anySession, path, data, zk.FlagEphemeral)
}

// CreatePersistent creates a persistent node at path holding data,
// creating missing parents as persistent nodes with no data. It fails with
// ErrNodeExists when the node exists, except after a connection loss during
// this call when the node holds exactly data: then the create lost its
// answer, not its effect.
func (s *Session) CreatePersistent(ctx context.Context, path string, data []byte) error {
	return s.create(ctx, anySession, path, data, zk.FlagPersistent)
}

func (s *Session) create(ctx context.Context, in binding, path string, data []byte, flags int32) error {
	full, err := s.fullPath(path)
	if err != nil {
		return s.opError("create", path, err)
	}
	err = s.do(ctx, in, func(ctx context.Context, c zkConn, retried bool) error {
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
	return s.ensurePath(ctx, anySession, path)
}

func (s *Session) ensurePath(ctx context.Context, in binding, path string) error {
	full, err := s.fullPath(path)
	if err != nil {
		return s.opError("ensure path", path, err)
	}
	if full == "/" {
		return nil
	}
	err = s.do(ctx, in, func(ctx context.Context, c zkConn, _ bool) error {
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
	return s.setOrCreate(ctx, anySession, path, data)
}

func (s *Session) setOrCreate(ctx context.Context, in binding, path string, data []byte) error {
	full, err := s.fullPath(path)
	if err != nil {
		return s.opError("set or create", path, err)
	}
	err = s.do(ctx, in, func(ctx context.Context, c zkConn, _ bool) error {
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
	return s.set(ctx, anySession, path, data, version)
}

func (s *Session) set(ctx context.Context, in binding, path string, data []byte, version int32) (Stat, error) {
	full, err := s.fullPath(path)
	if err != nil {
		return Stat{}, s.opError("set", path, err)
	}
	var st *zk.Stat
	err = s.do(ctx, in, func(_ context.Context, c zkConn, retried bool) (err error) {
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
	return s.delete(ctx, anySession, path, version)
}

func (s *Session) delete(ctx context.Context, in binding, path string, version int32) error {
	full, err := s.fullPath(path)
	if err != nil {
		return s.opError("delete", path, err)
	}
	err = s.do(ctx, in, func(_ context.Context, c zkConn, retried bool) error {
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
// the node it meant is gone and it succeeds. The session is the one of the
// connection the call runs on; for Bound.DeleteEphemeral, the Bound's.
func (s *Session) DeleteEphemeral(ctx context.Context, path string, version int32) error {
	return s.deleteEphemeral(ctx, anySession, path, version)
}

func (s *Session) deleteEphemeral(ctx context.Context, in binding, path string, version int32) error {
	full, err := s.fullPath(path)
	if err != nil {
		return s.opError("delete", path, err)
	}
	err = s.do(ctx, in, func(_ context.Context, c zkConn, retried bool) error {
		if retried {
			owner := in.id
			if !in.bound {
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
