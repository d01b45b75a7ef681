package secure_test

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/secure"
)

// TestExplainSortsFailures: Explain names the setting to check, and marks
// as ErrAuthentication only refusals that retrying cannot mend; a broker
// that cannot be reached gets no security hint at all.
func TestExplainSortsFailures(t *testing.T) {
	cl, err := secure.New(secure.Settings{SecurityProtocol: "SASL_SSL", SASLMechanism: "SCRAM-SHA-512",
		SASLUsername: "alice", SASLPassword: "secret"})
	require.NoError(t, err)
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name string
		err  error
		auth bool
		hint string // "" when Explain adds nothing
	}{
		{"bad credentials", sarama.ErrSASLAuthenticationFailed, true, "check sasl.username and sasl.password"},
		{"mechanism not enabled", sarama.ErrUnsupportedSASLMechanism, true, "sasl.mechanism"},
		{"connection closed", sarama.Wrap(sarama.ErrOutOfBrokers, io.EOF), false, "security.protocol"},
		{"nothing listens", sarama.Wrap(sarama.ErrOutOfBrokers, refused), false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := cl.Explain(tc.err)
			require.Equal(t, tc.auth, errors.Is(got, secure.ErrAuthentication))
			require.ErrorIs(t, got, tc.err)
			if tc.hint == "" {
				require.Equal(t, tc.err, got)
			} else {
				require.ErrorContains(t, got, tc.hint)
			}
			require.NotContains(t, got.Error(), "secret")
		})
	}
}
