package abortdial

import (
	"errors"
	"io"
	"net"
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
