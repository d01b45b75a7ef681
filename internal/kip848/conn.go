package kip848

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// MaxResponseSize bounds the size of an answer Conn reads: the answers of
// this package are a few kilobytes; one claiming more is refused before
// anything is allocated for it.
const MaxResponseSize = 16 << 20

// ErrConnClosed is returned by the requests of a closed Conn, and of one
// whose connection failed (I/O error, timeout, cancelled request): a Conn
// is not reused after a failure, the caller dials again.
var ErrConnClosed = errors.New("connection closed")

// Dialer opens connections; golang.org/x/net/proxy.Dialer has this shape,
// as has *net.Dialer.
type Dialer interface {
	Dial(network, addr string) (net.Conn, error)
}

// Conn is one connection to a broker that sends this package's requests,
// one at a time. Its methods are safe for concurrent use.
type Conn struct {
	addr     string
	clientID string
	timeout  time.Duration

	mu     sync.Mutex // one request at a time
	c      net.Conn
	corr   int32
	broken error

	closeOnce sync.Once

	versions map[int16]VersionRange
}

// Dial connects to addr through d and asks the broker which API versions
// it speaks (ApiVersions v0). Each request waits at most timeout for its
// answer.
func Dial(ctx context.Context, d Dialer, addr, clientID string, timeout time.Duration) (*Conn, error) {
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &Conn{addr: addr, clientID: clientID, timeout: timeout, c: nc}
	body, err := c.roundTrip(ctx, APIKeyApiVersions, 0, nil, false)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("ApiVersions to %s: %w", addr, err)
	}
	code, versions, err := DecodeApiVersionsResponse(body)
	if err == nil && code != 0 {
		err = fmt.Errorf("error code %d", code)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("ApiVersions to %s: %w", addr, err)
	}
	c.versions = versions
	return c, nil
}

// Addr is the broker's address.
func (c *Conn) Addr() string { return c.addr }

// Versions returns the versions of API key the broker speaks, ok=false if
// it does not speak it at all.
func (c *Conn) Versions(key int16) (VersionRange, bool) {
	v, ok := c.versions[key]
	return v, ok
}

// Close closes the connection; requests in flight fail with ErrConnClosed.
func (c *Conn) Close() {
	c.closeOnce.Do(func() { _ = c.c.Close() })
}

// Heartbeat sends a ConsumerGroupHeartbeat at version and returns the
// answer.
func (c *Conn) Heartbeat(ctx context.Context, req *HeartbeatRequest, version int16) (*HeartbeatResponse, error) {
	body, err := req.Encode(version)
	if err != nil {
		return nil, err
	}
	resp, err := c.roundTrip(ctx, APIKeyConsumerGroupHeartbeat, version, body, true)
	if err != nil {
		return nil, err
	}
	return DecodeHeartbeatResponse(resp)
}

// OffsetCommit sends an OffsetCommit at OffsetCommitVersion.
func (c *Conn) OffsetCommit(ctx context.Context, req *OffsetCommitRequest) (*OffsetCommitResponse, error) {
	resp, err := c.roundTrip(ctx, APIKeyOffsetCommit, OffsetCommitVersion, req.Encode(), true)
	if err != nil {
		return nil, err
	}
	return DecodeOffsetCommitResponse(resp)
}

// roundTrip sends one request and reads its answer's body. flexible
// selects request header v2 and response header v1 (tagged fields);
// otherwise v1 and v0. Any failure breaks the connection for good.
func (c *Conn) roundTrip(ctx context.Context, key, version int16, body []byte, flexible bool) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return nil, fmt.Errorf("%w (%w)", ErrConnClosed, c.broken)
	}
	resp, err := c.exchange(ctx, key, version, body, flexible)
	if err != nil {
		if ctx.Err() != nil {
			err = errors.Join(context.Cause(ctx), err)
		}
		c.broken = err
		c.Close()
		return nil, err
	}
	return resp, nil
}

func (c *Conn) exchange(ctx context.Context, key, version int16, body []byte, flexible bool) ([]byte, error) {
	deadline := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.c.SetDeadline(deadline); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.c.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	c.corr++
	corr := c.corr
	e := encoder{b: make([]byte, 4, 64+len(body))}
	e.int16(key)
	e.int16(version)
	e.int32(corr)
	e.string(c.clientID)
	if flexible {
		e.emptyTags()
	}
	e.b = append(e.b, body...)
	binary.BigEndian.PutUint32(e.b, uint32(len(e.b)-4))
	if _, err := c.c.Write(e.b); err != nil {
		return nil, err
	}
	return readResponse(c.c, corr, flexible)
}

// readResponse reads one size-prefixed answer from r and returns its body
// after the response header, which must carry corr.
func readResponse(r io.Reader, corr int32, flexible bool) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > MaxResponseSize {
		return nil, fmt.Errorf("%w: answer of %d bytes (at most %d expected)", ErrMalformed, n, MaxResponseSize)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	d := &decoder{b: buf, what: "response header"}
	if got := d.int32("CorrelationId"); got != corr {
		return nil, fmt.Errorf("%w: correlation id %d, expected %d", ErrMalformed, got, corr)
	}
	if flexible {
		d.skipTags("response header")
	}
	if d.err != nil {
		return nil, d.err
	}
	return buf[d.off:], nil
}
