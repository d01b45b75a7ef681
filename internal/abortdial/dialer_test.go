package abortdial

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errTest = errors.New("aborted")

// TestAbortClosesOpenConnectionsAndRefusesNewOnes: Abort ends a read that
// is blocked on a connection of the Dialer, leaves alone one that was
// closed before, and makes later dials fail with the error given to New.
func TestAbortClosesOpenConnectionsAndRefusesNewOnes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	var accepted []net.Conn // kept open: the client's reads block
	acceptDone := make(chan struct{})
	go func() {
		defer close(acceptDone)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted = append(accepted, c)
		}
	}()
	d := New(time.Second, 0, errTest)
	closed, err := d.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	open, err := d.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	d.mu.Lock()
	require.Len(t, d.conns, 1, "a closed connection leaves the set")
	d.mu.Unlock()

	read := make(chan error, 1)
	go func() {
		_, err := open.Read(make([]byte, 1))
		read <- err
	}()
	d.Abort()
	select {
	case err := <-read:
		require.Error(t, err)
		require.NotErrorIs(t, err, io.EOF, "closed on our side, not by the server")
	case <-time.After(5 * time.Second):
		t.Fatal("Abort did not end the blocked read")
	}
	_, err = d.Dial("tcp", ln.Addr().String())
	require.ErrorIs(t, err, errTest)
	require.NoError(t, ln.Close())
	<-acceptDone
	for _, c := range accepted {
		_ = c.Close()
	}
}

// countingInner is an Inner that counts its dials.
type countingInner struct {
	dials int
}

func (c *countingInner) Dial(network, addr string) (net.Conn, error) {
	c.dials++
	return net.DialTimeout(network, addr, time.Second)
}

// TestThroughDialsWithInnerAndAborts: a Dialer made by Through opens its
// connections with the inner dialer, and Abort still ends them.
func TestThroughDialsWithInnerAndAborts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	inner := &countingInner{}
	d := Through(inner, errTest)
	c, err := d.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	require.Equal(t, 1, inner.dials)
	read := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		read <- err
	}()
	d.Abort()
	select {
	case err := <-read:
		require.Error(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Abort did not end the blocked read")
	}
	_, err = d.Dial("tcp", ln.Addr().String())
	require.ErrorIs(t, err, errTest)
	require.Equal(t, 1, inner.dials, "no dial after Abort")
}

// TestResetEndsConnectionsWithAResetAndKeepsDialing: the peer of a
// connection ended by Reset sees a TCP reset, not a clean end of stream,
// and the Dialer goes on dialing.
func TestResetEndsConnectionsWithAResetAndKeepsDialing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	peers := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			peers <- c
		}
	}()
	d := New(time.Second, 0, errTest)
	c, err := d.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	peer := <-peers
	defer peer.Close()
	d.Reset()
	require.NoError(t, peer.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = peer.Read(make([]byte, 1))
	require.ErrorIs(t, err, syscall.ECONNRESET, "the peer must see a reset")
	_, err = c.Write([]byte("x"))
	require.Error(t, err, "the reset connection is closed on our side")

	again, err := d.Dial("tcp", ln.Addr().String())
	require.NoError(t, err, "Reset does not stop later dials")
	second := <-peers
	require.NoError(t, again.Close())
	require.NoError(t, second.Close())
}
