package testcluster

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestProxySet cuts a client from one of two servers, then from both.
func TestProxySet(t *testing.T) {
	s0, s1 := newSink(t), newSink(t)
	set, err := NewProxySet([]string{s0.ln.Addr().String(), s1.ln.Addr().String()})
	require.NoError(t, err)
	defer func() { require.NoError(t, set.Close()) }()
	require.Equal(t, 2, set.Len())
	addrs := set.Addrs()
	require.Equal(t, addrs[0]+","+addrs[1], set.Connect(), "no chroot outside ZooKeeper")
	require.Nil(t, set.Proxy(2))
	require.Error(t, set.SetModeFor(2, Blackhole))

	c0, err := net.Dial("tcp", addrs[0])
	require.NoError(t, err)
	defer c0.Close()
	c1, err := net.Dial("tcp", addrs[1])
	require.NoError(t, err)
	defer c1.Close()
	sc0, sc1 := s0.next(t), s1.next(t)

	require.NoError(t, set.SetModeFor(1, Blackhole))
	require.Equal(t, Forward, set.Proxy(0).Mode())
	_, err = c0.Write([]byte("to0"))
	require.NoError(t, err)
	_, err = c1.Write([]byte("to1"))
	require.NoError(t, err)
	testwait.WaitFor(t, 10*time.Second, func() bool { return sc0.received() == "to0" }, "server 0 is reachable")
	testwait.WaitFor(t, 10*time.Second, func() bool { return set.Proxy(1).heldBytes() == 3 }, "the bytes for server 1 are held")
	require.Empty(t, sc1.received())

	set.SetMode(Blackhole)
	_, err = c0.Write([]byte("!"))
	require.NoError(t, err)
	testwait.WaitFor(t, 10*time.Second, func() bool { return set.Proxy(0).heldBytes() == 1 }, "the bytes for server 0 are held")
	set.SetMode(Forward)
	testwait.WaitFor(t, 10*time.Second, func() bool {
		return sc0.received() == "to0!" && sc1.received() == "to1"
	}, "both servers get their bytes after the heal")
}
