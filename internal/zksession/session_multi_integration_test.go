package zksession

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestMultiAgainstZooKeeper: a transaction of creates and deletes applies
// all of them or none, names the operation that failed, creates ephemeral
// nodes of the session (with the chroot applied), and, bound to a session
// that is gone, is not applied by the next one.
func TestMultiAgainstZooKeeper(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	s := dialSession(t, ctx, SessionConfig{Connect: c.ZKConnect()})
	base := "/" + testcluster.UniqueName("zksession-multi")
	require.NoError(t, s.EnsurePath(ctx, base))

	require.NoError(t, s.Multi(ctx, CreateEphemeralOp(base+"/a", []byte("a")), CreateEphemeralOp(base+"/b", []byte("b"))))
	data, st, err := s.Get(ctx, base+"/a")
	require.NoError(t, err)
	require.Equal(t, "a", string(data))
	require.Equal(t, s.ID(), st.EphemeralOwner)

	// b exists: nothing is applied, and the error names b.
	err = s.Multi(ctx, CreateEphemeralOp(base+"/c", nil), DeleteOp(base+"/a", 0), CreateEphemeralOp(base+"/b", nil))
	require.ErrorIs(t, err, ErrNodeExists)
	var op *OpError
	require.ErrorAs(t, err, &op)
	require.Equal(t, base+"/b", op.Path)
	ok, _, err := s.Exists(ctx, base+"/c")
	require.NoError(t, err)
	require.False(t, ok, "a failed transaction created a node")
	ok, _, err = s.Exists(ctx, base+"/a")
	require.NoError(t, err)
	require.True(t, ok, "a failed transaction deleted a node")

	// A wrong version fails the whole transaction too.
	err = s.Multi(ctx, DeleteOp(base+"/a", 0), DeleteOp(base+"/b", 3))
	require.ErrorIs(t, err, ErrBadVersion)
	require.NoError(t, s.Multi(ctx, DeleteOp(base+"/a", 0), DeleteOp(base+"/b", 0)))
	children, err := s.Children(ctx, base)
	require.NoError(t, err)
	require.Empty(t, children)

	// Bound to a session that is gone: nothing is sent.
	old := s.ID()
	bound := s.Bind(old + 1) // never this Session's
	err = bound.Multi(ctx, CreateEphemeralOp(base+"/d", nil))
	require.ErrorIs(t, err, ErrSessionExpired)
	require.Equal(t, old, s.ID())
	ok, _, err = s.Exists(ctx, base+"/d")
	require.NoError(t, err)
	require.False(t, ok)
}
