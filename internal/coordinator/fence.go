package coordinator

import (
	"errors"
	"fmt"
)

// Fence guards commits made from outside the group on behalf of an owner
// whose ownership can lapse, such as a ZooKeeper-mode member with
// offsets.storage=kafka: Kafka does not fence commits with generation -1,
// so the owner must. Held reports whether the owner may commit now;
// Changed returns a channel closed at the next change (check Held again),
// a lapse by the clock included: a commit in flight is cut off only when
// Changed tells of the lapse, so a fence whose Changed stays open as Held
// turns false lets the commit run on until it is answered.
type Fence interface {
	Held() bool
	Changed() <-chan struct{}
}

// ErrFenced is returned by a commit whose fence did not hold: before an
// attempt (nothing was sent), or before the coordinator answered (the
// connection was reset, so what the kernel had not yet delivered of the
// request never reaches the broker).
var ErrFenced = errors.New("the committer's ownership is not confirmed")

// fenced runs call, one request to the coordinator, only while f holds
// (always, with a nil f), and cuts the Client's connections off if f lapses
// before call returns.
func fenced[T any](c *Client, f Fence, call func() (T, error)) (T, error) {
	var zero T
	if f == nil {
		return call()
	}
	if !f.Held() {
		return zero, ErrFenced
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := call()
		done <- result{v, err}
	}()
	for {
		changed := f.Changed()
		if !f.Held() {
			c.cutOff()
			r := <-done // the request fails with its connection
			if r.err == nil {
				return r.v, nil // answered just before the cut
			}
			return zero, fmt.Errorf("%w: the request was cut off (%v)", ErrFenced, r.err)
		}
		select {
		case r := <-done:
			return r.v, r.err
		case <-changed:
		}
	}
}

// cutOff ends the Client's connections: with a reset when it can, else by
// closing them.
func (c *Client) cutOff() {
	if c.reset != nil {
		c.reset()
		return
	}
	_ = c.Close()
}
