package testcluster

import (
	"net"
	"slices"
	"testing"
	"time"
)

// TestProxySetConnected: Connected names the proxies that relay a
// connection now, and forgets one once both of its sides are closed.
func TestProxySetConnected(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	s, err := NewProxySet([]string{ln.Addr().String(), ln.Addr().String(), ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Connected(); len(got) != 0 {
		t.Fatalf("connected %v before any connection", got)
	}
	c, err := net.Dial("tcp", s.Addrs()[1])
	if err != nil {
		t.Fatal(err)
	}
	server := <-accepted
	if got := s.Connected(); !slices.Equal(got, []int{1}) {
		t.Fatalf("connected %v, want [1]", got)
	}
	c.Close()
	server.Close()
	deadline := time.Now().Add(10 * time.Second)
	for len(s.Connected()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("connected %v after both sides closed", s.Connected())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
