package zksession

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// attempt is one try of an operation on c. retried tells that an earlier
// try failed with a lost connection, so that it may have been applied.
type attempt func(ctx context.Context, c zkConn, retried bool) error

// binding is the ZooKeeper session an operation runs in: whichever is
// current (the zero binding, the operations of Session), or session id
// alone (bound, the operations of a Bound).
type binding struct {
	id    int64
	bound bool
}

// anySession is the binding of the operations of Session.
var anySession = binding{}

// do runs fn until it returns something other than a connection loss, ctx
// ends or the Session closes. After a connection loss it waits for a
// session established after the try began (the same session reconnected,
// or a new one after an expiry), as ZkClient.retryUntilConnected does.
//
// An operation bound to a session (in.bound, see Bound) is sent only on
// that session's own connection, and only while the session's lease holds:
// it waits for the lease while it has lapsed, and fails with
// ErrSessionExpired once the session is gone. The connection never carries
// another session, so the operation can never be applied by the session
// that replaces its own. Other operations go to the current session, and
// are retried on the next one when theirs expires.
func (s *Session) do(ctx context.Context, in binding, fn attempt) error {
	retried := false
	for {
		s.mu.Lock()
		closing, gen := s.closing, s.gen
		s.mu.Unlock()
		if closing {
			return ErrClosed
		}
		var l *link
		if in.bound {
			if err := s.awaitLease(ctx, in.id); err != nil {
				return err
			}
			if l = s.linkOf(in.id); l == nil {
				return s.goneError(in.id)
			}
		} else {
			var err error
			if l, err = s.readyLink(ctx); err != nil {
				return err
			}
		}
		var err error
		if in.bound {
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
			if in.bound {
				return s.goneError(in.id)
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
