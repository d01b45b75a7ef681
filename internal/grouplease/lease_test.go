package grouplease

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNewLastsFractionOfTheTerm: a generation's lease lasts Fraction of
// its term from each renewal (the lease itself is tested in
// internal/lease).
func TestNewLastsFractionOfTheTerm(t *testing.T) {
	l := New(400*time.Millisecond, time.Time{})
	defer l.Revoke()
	require.Equal(t, 300*time.Millisecond, l.Length())
	sent := time.Now()
	l.Renew(sent)
	require.True(t, l.Held())
	require.Zero(t, l.Until().Sub(sent.Add(300*time.Millisecond)))
}
