package testcluster

import (
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// sink is a loopback server that records what each connection receives.
type sink struct {
	ln    net.Listener
	conns chan *sinkConn
	wg    sync.WaitGroup
}

// sinkConn is one accepted connection of a sink.
type sinkConn struct {
	net.Conn
	mu   sync.Mutex
	got  []byte
	end  error // how the read side ended
	done chan struct{}
}

func newSink(t *testing.T) *sink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &sink{ln: ln, conns: make(chan *sinkConn, 16)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			sc := &sinkConn{Conn: c, done: make(chan struct{})}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer close(sc.done)
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					sc.mu.Lock()
					sc.got = append(sc.got, buf[:n]...)
					if err != nil {
						sc.end = err
					}
					sc.mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
			s.conns <- sc
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for {
			select {
			case c := <-s.conns:
				c.Close()
				continue
			default:
			}
			break
		}
		s.wg.Wait()
	})
	return s
}

func (s *sink) next(t *testing.T) *sinkConn {
	t.Helper()
	select {
	case c := <-s.conns:
		t.Cleanup(func() { c.Close() })
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("the server saw no connection")
		return nil
	}
}

func (c *sinkConn) received() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.got)
}

func (c *sinkConn) waitEnd(t *testing.T) error {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server's connection did not end")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.end
}

func dialProxy(t *testing.T, p *Proxy) *net.TCPConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

func newTestProxy(t *testing.T, target string) *Proxy {
	t.Helper()
	p, err := NewProxy(target)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	return p
}

func readN(t *testing.T, c net.Conn, n int) string {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	buf := make([]byte, n)
	_, err := io.ReadFull(c, buf)
	require.NoError(t, err)
	return string(buf)
}

// TestProxyBlackholeDropsAbortedSendersBytes: bytes a client sends into a
// partition are lost when it aborts its connection (SO_LINGER 0 + close,
// a TCP reset) before the partition heals: the server gets a reset and
// none of them. The proxy of before delivered them on heal.
func TestProxyBlackholeDropsAbortedSendersBytes(t *testing.T) {
	s := newSink(t)
	p := newTestProxy(t, s.ln.Addr().String())
	c := dialProxy(t, p)
	_, err := c.Write([]byte("before|"))
	require.NoError(t, err)
	sc := s.next(t)
	testwait.WaitFor(t, 10*time.Second, func() bool { return sc.received() == "before|" }, "the server has the bytes sent before the partition")

	p.SetMode(Blackhole)
	_, err = c.Write([]byte("lost"))
	require.NoError(t, err)
	testwait.WaitFor(t, 10*time.Second, func() bool { return p.heldBytes() == 4 }, "the proxy holds the bytes sent into the partition")
	require.NoError(t, c.SetLinger(0))
	require.NoError(t, c.Close())
	testwait.WaitFor(t, 10*time.Second, func() bool { return p.heldBytes() == 0 }, "the proxy drops them once their sender aborted")
	require.Equal(t, "before|", sc.received(), "nothing crosses the partition")

	p.SetMode(Forward)
	end := sc.waitEnd(t)
	require.Equal(t, "before|", sc.received(), "the aborted sender's bytes never arrive")
	require.True(t, errors.Is(end, syscall.ECONNRESET), "the server's connection ends with a reset, got %v", end)
}

// TestProxyBlackholeDeliversHeldBytesOnHeal: a connection that stays open
// across the partition gets, in both directions, what was sent during it,
// once it heals, and nothing before.
func TestProxyBlackholeDeliversHeldBytesOnHeal(t *testing.T) {
	s := newSink(t)
	p := newTestProxy(t, s.ln.Addr().String())
	c := dialProxy(t, p)
	_, err := c.Write([]byte("a"))
	require.NoError(t, err)
	sc := s.next(t)
	testwait.WaitFor(t, 10*time.Second, func() bool { return sc.received() == "a" }, "forwarding")

	p.SetMode(Blackhole)
	require.Equal(t, Blackhole, p.Mode())
	_, err = c.Write([]byte("bcd"))
	require.NoError(t, err)
	_, err = sc.Write([]byte("reply"))
	require.NoError(t, err)
	testwait.WaitFor(t, 10*time.Second, func() bool { return p.heldBytes() == 3+5 }, "the proxy holds both directions' bytes")
	time.Sleep(200 * time.Millisecond) // nothing may cross meanwhile
	require.Equal(t, "a", sc.received())
	require.NoError(t, c.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "the client reads nothing during the partition, got %v", err)

	p.SetMode(Forward)
	testwait.WaitFor(t, 10*time.Second, func() bool { return sc.received() == "abcd" }, "the server gets the held bytes")
	require.Equal(t, "reply", readN(t, c, 5), "the client gets the held reply")
	_, err = c.Write([]byte("e"))
	require.NoError(t, err)
	testwait.WaitFor(t, 10*time.Second, func() bool { return sc.received() == "abcde" }, "forwarding goes on")
}

// TestProxyBlackholeCleanCloseDeliversDataThenFIN: a sender that closes
// cleanly during the partition has its bytes and then its FIN delivered.
func TestProxyBlackholeCleanCloseDeliversDataThenFIN(t *testing.T) {
	s := newSink(t)
	p := newTestProxy(t, s.ln.Addr().String())
	c := dialProxy(t, p)
	_, err := c.Write([]byte("x"))
	require.NoError(t, err)
	sc := s.next(t)
	testwait.WaitFor(t, 10*time.Second, func() bool { return sc.received() == "x" }, "forwarding")

	p.SetMode(Blackhole)
	_, err = c.Write([]byte("bye"))
	require.NoError(t, err)
	require.NoError(t, c.CloseWrite())
	testwait.WaitFor(t, 10*time.Second, func() bool { return p.heldBytes() == 3 }, "the proxy holds the bytes")
	require.Equal(t, "x", sc.received())
	p.SetMode(Forward)
	end := sc.waitEnd(t)
	require.Equal(t, "xbye", sc.received())
	require.ErrorIs(t, end, io.EOF, "a clean FIN after the data")
}

// TestProxyConnectionOpenedDuringBlackhole: a connection attempt made
// during the partition reaches the server once it heals; one given up
// before that never does.
func TestProxyConnectionOpenedDuringBlackhole(t *testing.T) {
	s := newSink(t)
	p := newTestProxy(t, s.ln.Addr().String())
	p.SetMode(Blackhole)

	gaveUp := dialProxy(t, p)
	_, err := gaveUp.Write([]byte("never"))
	require.NoError(t, err)
	testwait.WaitFor(t, 10*time.Second, func() bool { return p.heldBytes() == 5 }, "the proxy holds the first client's bytes")
	require.NoError(t, gaveUp.Close())
	testwait.WaitFor(t, 10*time.Second, func() bool { return p.heldBytes() == 0 }, "the proxy forgets the first client")

	kept := dialProxy(t, p)
	_, err = kept.Write([]byte("later"))
	require.NoError(t, err)
	testwait.WaitFor(t, 10*time.Second, func() bool { return p.heldBytes() == 5 }, "the proxy holds the second client's bytes")
	select {
	case <-s.conns:
		t.Fatal("a connection crossed the partition")
	case <-time.After(200 * time.Millisecond):
	}

	p.SetMode(Forward)
	sc := s.next(t)
	testwait.WaitFor(t, 10*time.Second, func() bool { return sc.received() == "later" }, "the kept connection's bytes arrive")
	select {
	case extra := <-s.conns:
		extra.Close()
		t.Fatal("the connection given up during the partition reached the server")
	case <-time.After(300 * time.Millisecond):
	}
	_, err = sc.Write([]byte("ok"))
	require.NoError(t, err)
	require.Equal(t, "ok", readN(t, kept, 2))
}

func TestProxyRefuseResetAndDelay(t *testing.T) {
	s := newSink(t)
	p := newTestProxy(t, s.ln.Addr().String())
	require.Equal(t, s.ln.Addr().String(), p.Target())

	p.SetMode(Refuse)
	refused, err := net.DialTimeout("tcp", p.Addr(), 5*time.Second)
	if err == nil { // else the reset came during the handshake
		defer refused.Close()
		require.NoError(t, refused.SetReadDeadline(time.Now().Add(10*time.Second)))
		_, err = refused.Read(make([]byte, 1))
	}
	require.ErrorIs(t, err, syscall.ECONNRESET, "a refused connection is reset")
	p.SetMode(Forward)

	c := dialProxy(t, p)
	p.SetDelay(300 * time.Millisecond)
	start := time.Now()
	_, err = c.Write([]byte("slow"))
	require.NoError(t, err)
	sc := s.next(t)
	testwait.WaitFor(t, 10*time.Second, func() bool { return sc.received() == "slow" }, "delayed bytes arrive")
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	p.SetDelay(0)

	p.ResetAll()
	require.ErrorIs(t, sc.waitEnd(t), syscall.ECONNRESET, "the server side is reset")
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = c.Read(make([]byte, 1))
	require.ErrorIs(t, err, syscall.ECONNRESET, "the client side is reset")
}

func TestNewProxyRefusesAConnectString(t *testing.T) {
	for _, target := range []string{"127.0.0.1:1,127.0.0.1:2", "127.0.0.1:1/kafka", "nohost"} {
		_, err := NewProxy(target)
		require.ErrorIs(t, err, ErrProxyTarget, target)
	}
}

// TestProxyForwardsAClientThatClosesAtOnce: a client that sends its
// request and closes its side before the proxy has reached the server
// still gets it delivered, followed by its FIN (only a connection opened
// during a partition is dropped when its client gives up first).
func TestProxyForwardsAClientThatClosesAtOnce(t *testing.T) {
	s := newSink(t)
	p := newTestProxy(t, s.ln.Addr().String())
	for range 20 {
		c := dialProxy(t, p)
		_, err := c.Write([]byte("srvr"))
		require.NoError(t, err)
		require.NoError(t, c.CloseWrite())
		sc := s.next(t)
		require.ErrorIs(t, sc.waitEnd(t), io.EOF)
		require.Equal(t, "srvr", sc.received())
	}
}
