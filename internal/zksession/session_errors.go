package zksession

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/go-zookeeper/zk"
)

// Errors of Session operations. Operations return an *OpError whose chain
// holds one of these where it applies, together with go-zookeeper's own
// error (errors.Is(err, ErrNoNode) and errors.Is(err, zk.ErrNoNode) both
// hold).
var (
	// ErrNoNode: the node, or for a create the parent, does not exist.
	ErrNoNode = errors.New("node does not exist")
	// ErrNodeExists: the node to create exists and is not the one this
	// Session would have created.
	ErrNodeExists = errors.New("node already exists")
	// ErrBadVersion: the node's version is not the expected one.
	ErrBadVersion = errors.New("version conflict")
	// ErrNotEmpty: the node to delete has children.
	ErrNotEmpty = errors.New("node has children")
	// ErrNoAuth: the node's ACL denies the operation to this connection's
	// credentials.
	ErrNoAuth = errors.New("not authorized by the node's ACL")
	// ErrInvalidPath: the path is not a valid ZooKeeper path.
	ErrInvalidPath = errors.New("invalid path")
	// ErrConnectionTimeout: Dial got no session within
	// SessionConfig.ConnectionTimeout.
	ErrConnectionTimeout = errors.New("timed out connecting to ZooKeeper")
	// ErrConnectionLoss: the connection was lost and the context ended
	// before a session was re-established; the operation may or may not
	// have been applied. The context's error is in the chain too.
	ErrConnectionLoss = errors.New("connection to ZooKeeper lost")
	// ErrSessionExpired: ZooKeeper expired the session the operation or
	// watch belonged to.
	ErrSessionExpired = errors.New("session expired")
	// ErrClosed: the Session is closed.
	ErrClosed = errors.New("session closed")
)

// OpError reports a failed Session operation.
type OpError struct {
	// Op names the operation: "get", "children", "exists", "create",
	// "set", "delete", "ensure path" or "set or create".
	Op string
	// Path is the path as given, relative to the chroot.
	Path string
	// Err is the cause. Its chain holds a sentinel of this package where
	// one applies, and go-zookeeper's or the context's error.
	Err error
}

// Error returns "<op> <path>: <cause>".
func (e *OpError) Error() string {
	cause := "<nil>"
	if e.Err != nil {
		cause = strings.TrimPrefix(e.Err.Error(), "zk: ")
	}
	return e.Op + " " + e.Path + ": " + cause
}

// Unwrap returns the cause.
func (e *OpError) Unwrap() error { return e.Err }

// causeError pairs a sentinel of this package with the error it stands
// for, so that errors.Is finds both.
type causeError struct {
	ours, theirs error
	msg          string // defaults to ours' message
}

func (e *causeError) Error() string {
	if e.msg != "" {
		return e.msg
	}
	return e.ours.Error()
}

func (e *causeError) Unwrap() []error { return []error{e.ours, e.theirs} }

// zkSentinels maps go-zookeeper's errors to ours.
var zkSentinels = []struct{ theirs, ours error }{
	{zk.ErrNoNode, ErrNoNode},
	{zk.ErrNodeExists, ErrNodeExists},
	{zk.ErrBadVersion, ErrBadVersion},
	{zk.ErrNotEmpty, ErrNotEmpty},
	{zk.ErrNoAuth, ErrNoAuth},
	{zk.ErrInvalidPath, ErrInvalidPath},
	{zk.ErrSessionExpired, ErrSessionExpired},
	{zk.ErrClosing, ErrClosed},
}

// mapCause translates an error of go-zookeeper (or of the network) into
// one whose chain holds the matching sentinel of this package.
func (s *Session) mapCause(err error) error {
	if err == nil {
		return nil
	}
	if isContextError(err) {
		return err
	}
	for _, m := range zkSentinels {
		if errors.Is(err, m.ours) {
			return err
		}
		if errors.Is(err, m.theirs) {
			return &causeError{ours: m.ours, theirs: err}
		}
	}
	if errors.Is(err, ErrClosed) || errors.Is(err, ErrConnectionLoss) {
		return err
	}
	if isConnectionLoss(err) {
		if s.isClosing() {
			return &causeError{ours: ErrClosed, theirs: err}
		}
		return &causeError{ours: ErrConnectionLoss, theirs: err, msg: ErrConnectionLoss.Error() + " (" + strings.TrimPrefix(err.Error(), "zk: ") + ")"}
	}
	return err
}

func (s *Session) opError(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &OpError{Op: op, Path: path, Err: s.mapCause(err)}
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// isConnectionLoss reports whether err means that a request's connection
// was lost, so that it may or may not have been applied: go-zookeeper
// fails requests in flight with ErrConnectionClosed, requests still queued
// when it has tried every server with ErrNoServer, and a request whose
// write failed with the network error.
func isConnectionLoss(err error) bool {
	if err == nil || isContextError(err) {
		return false
	}
	if errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

func (s *Session) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}
