package kafkagroup

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/secure"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestStaticLeaderRestartSkipsAssignmentOverSASL: over SASL (SCRAM over
// TLS, PLAIN without), the member sends JoinGroup v9 as it does without:
// a static leader that restarts within its session comes back as the
// leader told to skip the assignment (KIP-814), which only v9's answer
// can say. (Before, with SASL the member sent JoinGroup v5, whose
// connection spoke SASL, and came back without SkippedAssignment.)
func TestStaticLeaderRestartSkipsAssignmentOverSASL(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedSecure(t)
	sec := c.Security()
	for _, tc := range []struct {
		name, listener string
		s              secure.Settings
	}{
		{"SASL_SSL SCRAM-SHA-512", testcluster.ListenerSASLSSL, secure.Settings{SecurityProtocol: "SASL_SSL", SSLTruststoreLocation: sec.CAFile,
			SASLMechanism: "SCRAM-SHA-512", SASLUsername: sec.User, SASLPassword: sec.Password}},
		{"SASL_PLAINTEXT PLAIN", testcluster.ListenerSASLPlaintext, secure.Settings{SecurityProtocol: "SASL_PLAINTEXT",
			SASLMechanism: "PLAIN", SASLUsername: sec.User, SASLPassword: sec.Password}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl, err := secure.New(tc.s)
			require.NoError(t, err)
			topic := createTopic(t, c, "kg-sasl-v9", 2)
			cfg := testConfig(c, testcluster.UniqueName("kg-sasl-v9"), topic)
			cfg.Brokers = []string{sec.Listener(tc.listener, 0)}
			cfg.Secure = cl.Apply
			cfg.InstanceID = "instance-a"
			cfg.SessionTimeout = 20 * time.Second
			a := startRunner(t, cfg)
			testwait.WaitFor(t, 30*time.Second, func() bool { return a.live() != nil }, "the member to lead")
			require.True(t, a.live().Leader)
			a.stop() // no LeaveGroup for a static member
			a2 := startRunner(t, cfg)
			testwait.WaitFor(t, 30*time.Second, func() bool { return a2.live() != nil }, "the restarted member back in the group")
			g := a2.live()
			require.True(t, g.Leader, "the restarted leader came back as the leader")
			require.True(t, g.SkippedAssignment, "JoinGroup v9: the coordinator kept the assignment")
		})
	}
}
