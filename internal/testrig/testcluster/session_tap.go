package testcluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"
)

// SessionTap expires a ZooKeeper client's session on demand, the way
// Curator's KillSession does: it learns the session id and password from
// the server's connect response on the client's own connection, opens a
// second connection with the same credentials and closes the session there.
// ZooKeeper then deletes the session's ephemeral nodes at once and the
// client sees its session expire when it reconnects.
//
// Pass Dial as the client's dialer (zk.WithDialer), or DialerFor's dialer
// to a client that takes a context dialer for all its connections.
type SessionTap struct {
	mu       sync.Mutex
	server   string
	session  int64
	password []byte
	timeout  int32
}

// Dial has the signature of go-zookeeper's zk.Dialer.
func (t *SessionTap) Dial(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return &tappedConn{Conn: c, tap: t, server: address}, nil
}

// DialerFor returns a context dialer (the shape of connector.Dialer) for a
// client whose one dialer also carries its broker connections: it taps the
// connections to zkServers (host:port, as Cluster.ZKServers gives them) as
// Dial does, and dials every other address without tapping it.
func (t *SessionTap) DialerFor(zkServers []string) *TapDialer {
	return &TapDialer{tap: t, servers: slices.Clone(zkServers)}
}

// TapDialer is the context dialer of SessionTap.DialerFor.
type TapDialer struct {
	tap     *SessionTap
	servers []string
	d       net.Dialer
}

// DialContext connects to address, tapping the connection when address is
// one of the ZooKeeper servers.
func (d *TapDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := d.d.DialContext(ctx, network, address)
	if err != nil || !slices.Contains(d.servers, address) {
		return c, err
	}
	return &tappedConn{Conn: c, tap: d.tap, server: address}, nil
}

// SessionID is the last session id the server handed the client, 0 if none.
func (t *SessionTap) SessionID() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.session
}

func (t *SessionTap) record(server string, session int64, timeout int32, password []byte) {
	if session == 0 {
		return // the server said "expired"; keep the old credentials
	}
	t.mu.Lock()
	t.server, t.session, t.timeout, t.password = server, session, timeout, password
	t.mu.Unlock()
}

// Expire closes the client's current session on the server. It returns
// once ZooKeeper has confirmed that the session no longer exists.
func (t *SessionTap) Expire() error {
	t.mu.Lock()
	server, session, timeout, password := t.server, t.session, t.timeout, t.password
	t.mu.Unlock()
	if session == 0 {
		return errors.New("testcluster: the tapped client has no session yet")
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		gone, err := closeSession(server, session, timeout, password)
		if err == nil && gone {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("testcluster: session 0x%x did not expire", session)
}

// closeSession attaches to the session; if the server says it no longer
// exists, gone is true; otherwise it sends closeSession and reports false so
// that the caller checks again.
func closeSession(server string, session int64, timeout int32, password []byte) (gone bool, err error) {
	c, err := net.DialTimeout("tcp", server, 5*time.Second)
	if err != nil {
		return false, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	// ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId, passwd, readOnly.
	req := make([]byte, 0, 64)
	req = binary.BigEndian.AppendUint32(req, 0)
	req = binary.BigEndian.AppendUint64(req, 0)
	req = binary.BigEndian.AppendUint32(req, uint32(timeout))
	req = binary.BigEndian.AppendUint64(req, uint64(session))
	req = binary.BigEndian.AppendUint32(req, uint32(len(password)))
	req = append(req, password...)
	req = append(req, 0)
	if err := writeFrame(c, req); err != nil {
		return false, err
	}
	resp, err := readFrame(c)
	if err != nil {
		return false, err
	}
	_, got, _, _, err := parseConnectResponse(resp)
	if err != nil {
		return false, err
	}
	if got == 0 {
		return true, nil
	}
	// RequestHeader{xid, type=closeSession(-11)}.
	closeReq := binary.BigEndian.AppendUint32(nil, 1)
	closeReq = binary.BigEndian.AppendUint32(closeReq, uint32(0xFFFFFFF5))
	if err := writeFrame(c, closeReq); err != nil {
		return false, err
	}
	_, _ = readFrame(c)
	return false, nil
}

func writeFrame(w io.Writer, body []byte) error {
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	_, err := w.Write(append(frame, body...))
	return err
}

func readFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > 1<<20 {
		return nil, fmt.Errorf("testcluster: ZooKeeper frame of %d bytes", n)
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}

// parseConnectResponse decodes protocolVersion, timeOut, sessionId, passwd.
func parseConnectResponse(b []byte) (version int32, session int64, timeout int32, password []byte, err error) {
	if len(b) < 20 {
		return 0, 0, 0, nil, fmt.Errorf("testcluster: short ZooKeeper connect response (%d bytes)", len(b))
	}
	version = int32(binary.BigEndian.Uint32(b[0:]))
	timeout = int32(binary.BigEndian.Uint32(b[4:]))
	session = int64(binary.BigEndian.Uint64(b[8:]))
	n := int(int32(binary.BigEndian.Uint32(b[16:])))
	if n < 0 || 20+n > len(b) {
		return 0, 0, 0, nil, fmt.Errorf("testcluster: bad password length %d in ZooKeeper connect response", n)
	}
	password = append([]byte(nil), b[20:20+n]...)
	return version, session, timeout, password, nil
}

// tappedConn watches the first frame the server sends on a connection, the
// connect response, and records the credentials in it.
type tappedConn struct {
	net.Conn
	tap    *SessionTap
	server string

	buf  []byte
	done bool
}

func (c *tappedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done && n > 0 {
		c.buf = append(c.buf, p[:n]...)
		if len(c.buf) >= 4 {
			size := int(binary.BigEndian.Uint32(c.buf))
			if len(c.buf) >= 4+size {
				if _, session, timeout, pw, perr := parseConnectResponse(c.buf[4 : 4+size]); perr == nil {
					c.tap.record(c.server, session, timeout, pw)
				}
				c.done, c.buf = true, nil
			}
		}
	}
	return n, err
}
