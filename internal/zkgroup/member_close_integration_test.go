package zkgroup

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// blockingHandler holds the first orderly Revoke until released, and
// records whether its context was still usable then.
type blockingHandler struct {
	recorder
	entered chan struct{}
	release chan struct{}
	ctxErr  chan error
}

func (h *blockingHandler) Revoke(ctx context.Context, gen *Generation, lost bool) error {
	select {
	case h.entered <- struct{}{}:
		<-h.release
		h.ctxErr <- ctx.Err()
	default:
	}
	return h.recorder.Revoke(ctx, gen, lost)
}

// TestCloseDuringRebalanceLetsTheHandOverFinish: Close while the member's
// loop is ending a generation for a rebalance must not cancel the
// hand-over (the handler's commit) halfway.
func TestCloseDuringRebalanceLetsTheHandOverFinish(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 2)
	group := testcluster.UniqueName("g-close")
	s := dialObserver(t, c)
	h := &blockingHandler{entered: make(chan struct{}), release: make(chan struct{}), ctxErr: make(chan error, 1)}
	a, err := zkassign.NewAssignor(strategyname.Range)
	require.NoError(t, err)
	m, err := NewMember(Session(s), MemberConfig{Group: group, ConsumerID: group + "_m", Subscription: StaticSubscription(map[string]int{topic: 1}),
		Assignor: a, MaxRetries: 3, Backoff: time.Second, SessionTimeout: 4 * time.Second, Handler: h})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, m.Start(ctx))
	require.NotNil(t, m.Generation())

	m.Rebalance()
	select {
	case <-h.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the rebalance never ended the generation")
	}
	closed := make(chan error, 1)
	go func() { closed <- m.Close(ctx) }()
	time.Sleep(200 * time.Millisecond) // let Close cancel the loop
	close(h.release)
	require.NoError(t, <-h.ctxErr, "the hand-over's context was cancelled by Close")
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Close hung")
	}
	ids, err := s.Children(ctx, zkutil.ConsumerIDsPath(group))
	require.NoError(t, err)
	require.Empty(t, ids, "Close deleted the registration")
}

// closingHandler closes its member from the first orderly Revoke, passing
// Close the context of the call on the handler's goroutine or
// (elsewhere) a context derived from it on another goroutine that the
// handler waits for, and sends what Close returned.
type closingHandler struct {
	recorder
	m         *Member
	elsewhere bool
	once      sync.Once
	closed    chan error
}

func (h *closingHandler) Revoke(ctx context.Context, gen *Generation, lost bool) error {
	if !lost {
		h.once.Do(func() {
			if !h.elsewhere {
				h.closed <- h.m.Close(ctx)
				return
			}
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- h.m.Close(cctx) }()
			select {
			case err := <-done:
				h.closed <- err
			case <-time.After(10 * time.Second):
				h.closed <- errors.New("Close given the handler's context waited for the handler")
			}
		})
	}
	return h.recorder.Revoke(ctx, gen, lost)
}

// TestCloseFromCallback: Close given the context of a Handler call, or one
// derived from it, does not wait for that call, whether the handler calls
// it or another goroutine that the handler waits for; the member is closed once the handler has
// returned, and a later Close waits for that.
func TestCloseFromCallback(t *testing.T) {
	t.Parallel()
	for _, elsewhere := range []bool{false, true} {
		name := "handler goroutine"
		if elsewhere {
			name = "another goroutine"
		}
		t.Run(name, func(t *testing.T) {
			c := testcluster.Shared(t)
			topic := newTopic(t, c, 2)
			group := testcluster.UniqueName("g-close-handler")
			s := dialObserver(t, c)
			h := &closingHandler{elsewhere: elsewhere, closed: make(chan error, 1)}
			a, err := zkassign.NewAssignor(strategyname.Range)
			require.NoError(t, err)
			m, err := NewMember(Session(s), MemberConfig{Group: group, ConsumerID: group + "_m", Subscription: StaticSubscription(map[string]int{topic: 1}),
				Assignor: a, MaxRetries: 3, Backoff: time.Second, SessionTimeout: 4 * time.Second, Handler: h})
			require.NoError(t, err)
			h.m = m
			ctx := context.Background()
			require.NoError(t, m.Start(ctx))
			require.NotNil(t, m.Generation())

			m.Rebalance() // ends the generation: Revoke
			select {
			case err := <-h.closed:
				require.NoError(t, err)
			case <-time.After(30 * time.Second):
				t.Fatal("Close called from the handler did not return")
			}
			require.NoError(t, m.Close(ctx))
			require.Nil(t, m.Generation())
			ids, err := s.Children(ctx, zkutil.ConsumerIDsPath(group))
			require.NoError(t, err)
			require.Empty(t, ids, "Close deleted the registration")
		})
	}
}
