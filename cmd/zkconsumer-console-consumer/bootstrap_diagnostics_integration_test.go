package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestBootstrapServerUnreachableIsPrinted: with --bootstrap-server at an
// address where no broker listens, the console consumer says so on stderr
// within seconds, naming the address, and keeps trying (as Kafka 1.1.1's
// does) until interrupted. (Before, it printed nothing.)
func TestBootstrapServerUnreachableIsPrinted(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	ctx, cancel := context.WithCancel(testwait.Context(t, time.Minute))
	defer cancel()
	var stdout, stderr testcluster.LockedBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"--bootstrap-server", addr, "--topic", "t"}, &stdout, &stderr) }()
	start := time.Now()
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "bootstrap.servers "+addr) },
		30*time.Second, 50*time.Millisecond, "stderr so far: %s", stderr.String())
	t.Logf("after %v: %s", time.Since(start), stderr.String())
	require.Contains(t, stderr.String(), "connection refused")
	select {
	case code := <-done:
		t.Fatalf("gave up with %d", code)
	default:
	}
	cancel() // as SIGINT does
	select {
	case code := <-done:
		require.Equal(t, 0, code)
	case <-time.After(30 * time.Second):
		t.Fatal("did not stop after the interrupt")
	}
	require.Empty(t, stdout.String())
}

// TestBootstrapServerSecurityFailuresExit: a wrong SASL password or an
// untrusted broker certificate end the console consumer within seconds,
// with exit status 1 and, once, an error that names the setting to fix.
func TestBootstrapServerSecurityFailuresExit(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedSecure(t)
	sec := c.Security()
	for _, tc := range []struct {
		name     string
		listener string
		props    []string
		want     string
	}{
		{"bad password", testcluster.ListenerSASLSSL, []string{"security.protocol=SASL_SSL", "ssl.ca.location=" + sec.CAFile,
			"sasl.mechanism=SCRAM-SHA-512", "sasl.username=" + sec.User, "sasl.password=not-the-password"}, "sasl.username and sasl.password"},
		{"untrusted CA", testcluster.ListenerSSL, []string{"security.protocol=SSL", "ssl.ca.location=" + sec.UntrustedCAFile},
			"ssl.truststore.location"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--bootstrap-server", sec.Listener(tc.listener, 0), "--topic", "t"}
			for _, p := range tc.props {
				args = append(args, "--consumer-property", p)
			}
			start := time.Now()
			r := runOurs(testwait.Context(t, time.Minute), args...)
			t.Logf("after %v, exit %d: %s", time.Since(start), r.code, r.stderr)
			require.Less(t, time.Since(start), 30*time.Second)
			require.Equal(t, 1, r.code)
			require.Equal(t, 1, strings.Count(r.stderr, tc.want), "the error, once")
			require.NotContains(t, r.stderr, "not-the-password")
			require.Contains(t, r.stderr, "Processed a total of 0 messages")
		})
	}
}
