package testcluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestClientProgramRunsTheRelease proves that ClientProgram runs a
// single-file Java program against the kafka-clients jar of the release
// it names, and refuses a release it does not know.
func TestClientProgramRunsTheRelease(t *testing.T) {
	t.Parallel()
	for release, want := range map[string]string{"3.9": "3.9.", "4": "4."} {
		t.Run(release, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd, err := ClientProgram(ctx, release, "testdata/ClientsVersion.java")
			require.NoError(t, err)
			out, err := cmd.Output()
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(strings.TrimSpace(string(out)), want), "kafka-clients version %q, want %s*", out, want)
		})
	}
	_, err := ClientProgram(context.Background(), "2.8", "testdata/ClientsVersion.java")
	require.ErrorContains(t, err, `release "2.8"`)
}
