package consumergroup

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/kip848"
)

// fakeCoordinator answers a member's ConsumerGroupHeartbeats over an
// in-memory connection, one at a time, as the test says: each request
// arrives on reqs, and the next answer sent on answers goes back.
type fakeCoordinator struct {
	reqs    chan *kip848.HeartbeatRequest
	answers chan *kip848.HeartbeatResponse
}

// connectFake gives m a coordinator served by a fakeCoordinator that
// speaks ConsumerGroupHeartbeat version 1.
func connectFake(t *testing.T, m *Member) *fakeCoordinator {
	t.Helper()
	client, server := net.Pipe()
	f := &fakeCoordinator{reqs: make(chan *kip848.HeartbeatRequest), answers: make(chan *kip848.HeartbeatResponse)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.serve(server)
	}()
	t.Cleanup(func() {
		_ = server.Close()
		<-done
	})
	conn, err := kip848.Dial(context.Background(), pipeDialer{client}, "fake:9092", "test", 5*time.Second)
	require.NoError(t, err)
	m.coordMu.Lock()
	m.coord = &coordinator{id: 1, addr: "fake:9092", conn: conn, fetch: sarama.NewBroker("fake:9092"), hbVersion: 1, fetchVersion: 5}
	m.coordMu.Unlock()
	return f
}

type pipeDialer struct{ c net.Conn }

func (d pipeDialer) Dial(string, string) (net.Conn, error) { return d.c, nil }

// serve reads requests until the connection closes: ApiVersions is
// answered at once, heartbeats as the test says.
func (f *fakeCoordinator) serve(c net.Conn) {
	for {
		var size [4]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		buf := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		key := int16(binary.BigEndian.Uint16(buf[0:]))
		version := int16(binary.BigEndian.Uint16(buf[2:]))
		corr := binary.BigEndian.Uint32(buf[4:])
		off := 10 + int(binary.BigEndian.Uint16(buf[8:])) // client id
		var body []byte
		switch key {
		case kip848.APIKeyApiVersions: // header v1
			body = kip848.EncodeApiVersionsResponse(0, map[int16]kip848.VersionRange{
				kip848.APIKeyConsumerGroupHeartbeat: {Min: 0, Max: 1}, kip848.APIKeyOffsetCommit: {Min: 0, Max: 9}})
		case kip848.APIKeyConsumerGroupHeartbeat: // header v2: an empty tag buffer follows
			req, err := kip848.DecodeHeartbeatRequest(buf[off+1:], version)
			if err != nil {
				return
			}
			f.reqs <- req
			resp, ok := <-f.answers
			if !ok {
				return
			}
			body = append([]byte{0}, resp.Encode()...) // response header v1: no tags
		default:
			return
		}
		out := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
		out = binary.BigEndian.AppendUint32(out, corr)
		if _, err := c.Write(append(out, body...)); err != nil && !errors.Is(err, io.ErrClosedPipe) {
			return
		}
	}
}
