package zksession

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// ErrOutcomeUnknown is the error of a Multi whose connection was lost
// before its answer came: it may or may not have been applied.
var ErrOutcomeUnknown = errors.New("the connection was lost before the answer; the transaction may or may not have been applied")

// OpKind is what an Op does.
type OpKind int

const (
	// OpCreateEphemeral creates an ephemeral node of the session at Path
	// holding Data. Unlike CreateEphemeral, it does not create missing
	// parents: the transaction fails with ErrNoNode.
	OpCreateEphemeral OpKind = iota + 1
	// OpDelete deletes the node at Path if its version is Version (-1:
	// any).
	OpDelete
)

// Op is one operation of a Multi, usually made by CreateEphemeralOp or
// DeleteOp.
type Op struct {
	Kind    OpKind // OpCreateEphemeral or OpDelete
	Path    string // relative to the chroot
	Data    []byte // OpCreateEphemeral
	Version int32  // OpDelete
}

// CreateEphemeralOp is the Op that creates an ephemeral node at path
// holding data.
func CreateEphemeralOp(path string, data []byte) Op {
	return Op{Kind: OpCreateEphemeral, Path: path, Data: data}
}

// DeleteOp is the Op that deletes the node at path if its version is
// version (-1: any).
func DeleteOp(path string, version int32) Op {
	return Op{Kind: OpDelete, Path: path, Version: version}
}

// Multi applies ops in one ZooKeeper transaction (multi): all of them, or
// none when one fails; it then fails with that operation's error
// (ErrNodeExists, ErrNoNode, ErrBadVersion, ...) in an *OpError naming its
// path. A transaction of many writes costs ZooKeeper one proposal instead
// of one per write. Bound.Multi sends it only on its session's connection,
// as every operation of a Bound is.
//
// Unlike the single operations, Multi is not retried after a lost
// connection: a retry of a transaction that was applied would meet the
// nodes it changed, or nodes others created since in their place, and
// could not tell which. It fails with ErrOutcomeUnknown instead, and the
// caller finds out by reading.
func (s *Session) Multi(ctx context.Context, ops ...Op) error {
	return s.multi(ctx, anySession, ops)
}

func (s *Session) multi(ctx context.Context, in binding, ops []Op) error {
	if len(ops) == 0 {
		return nil
	}
	reqs := make([]any, len(ops))
	for i, op := range ops {
		full, err := s.fullPath(op.Path)
		if err != nil {
			return s.opError("multi", op.Path, err)
		}
		switch op.Kind {
		case OpCreateEphemeral:
			reqs[i] = &zk.CreateRequest{Path: full, Data: op.Data, Acl: s.aclFor(full), Flags: zk.FlagEphemeral}
		case OpDelete:
			reqs[i] = &zk.DeleteRequest{Path: full, Version: op.Version}
		default:
			return s.opError("multi", op.Path, fmt.Errorf("unknown operation kind %d", op.Kind))
		}
	}
	failed := ops[0].Path
	err := s.do(ctx, in, func(_ context.Context, c zkConn, retried bool) error {
		if retried {
			return ErrOutcomeUnknown
		}
		res, err := c.Multi(reqs...)
		for i, r := range res {
			if err != nil && r.Error == err && i < len(ops) { // the operation that failed
				failed = ops[i].Path
				break
			}
		}
		return err
	})
	if err != nil {
		return s.opError(fmt.Sprintf("multi of %d", len(ops)), failed, err)
	}
	return nil
}
