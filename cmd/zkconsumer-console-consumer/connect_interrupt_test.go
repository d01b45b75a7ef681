package main

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestInterruptWhileConnectingToZooKeeper: an interrupt while the console
// consumer is still connecting to a ZooKeeper that accepts connections but
// never answers ends the run at once, not after
// zookeeper.connection.timeout.ms (set to a minute here).
func TestInterruptWhileConnectingToZooKeeper(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns sync.WaitGroup
	held := make(chan net.Conn, 16)
	conns.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held <- c // accepted, never answered
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		conns.Wait()
		close(held)
		for c := range held {
			_ = c.Close()
		}
	})

	ctx, cancel := context.WithCancel(testwait.Context(t, 2*time.Minute))
	defer cancel()
	done := make(chan result, 1)
	go func() {
		done <- runOurs(ctx, "--zookeeper", ln.Addr().String(), "--topic", "t",
			"--consumer-property", "zookeeper.connection.timeout.ms=60000")
	}()
	// Still connecting once the server has accepted its connection: the
	// server never answers.
	testwait.WaitFor(t, 30*time.Second, func() bool { return len(held) > 0 }, "a connection to the silent server")
	cancel() // what SIGINT does
	start := time.Now()
	select {
	case r := <-done:
		t.Logf("returned %v after the interrupt, exit %d: %s", time.Since(start), r.code, r.stderr)
		require.Less(t, time.Since(start), 15*time.Second)
	case <-time.After(45 * time.Second):
		t.Fatal("still connecting 45 s after the interrupt")
	}
}
