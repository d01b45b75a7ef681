package connector

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// A failed automatic commit reads with the package's name once, and
// errors.Is and errors.As still find the sentinel, the CommitError and its
// cause.
func TestAutoCommitErrorNamesThePackageOnce(t *testing.T) {
	cause := errors.New("zk: connection closed")
	cerr := &CommitError{Offsets: map[TopicPartition]int64{{Topic: "t", Partition: 3}: 17}, Err: cause}
	err := underOnce(ErrAutoCommit, cerr)
	require.Equal(t, "connector: auto-commit: commit of 1 partition (t-3@17) failed: zk: connection closed", err.Error())
	require.ErrorIs(t, err, ErrAutoCommit)
	require.ErrorIs(t, err, cause)
	var got *CommitError
	require.ErrorAs(t, err, &got)
	require.Same(t, cerr, got)
}
