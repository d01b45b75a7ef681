package kafkagroup

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/kip848"
)

// fakeCoordinator answers a member's requests over in-memory
// connections, each connection's in order as a broker does: heartbeats as
// the test says (each request arrives on reqs, and the next answer sent on
// answers goes back), except the one a member leaves with, which is
// answered at once; an OffsetCommit is announced on commits and never
// answered.
type fakeCoordinator struct {
	reqs    chan *kip848.HeartbeatRequest
	answers chan *kip848.HeartbeatResponse
	commits chan struct{}
	stop    chan struct{} // closed at the end of the test
}

// connectFake gives m a coordinator served by a fakeCoordinator that
// speaks ConsumerGroupHeartbeat version 1, over as many connections as
// the member opens to a coordinator.
func connectFake(t *testing.T, m *Member) *fakeCoordinator {
	t.Helper()
	f := &fakeCoordinator{reqs: make(chan *kip848.HeartbeatRequest), answers: make(chan *kip848.HeartbeatResponse),
		commits: make(chan struct{}, 16), stop: make(chan struct{})}
	var wg sync.WaitGroup
	dial := func() *kip848.Conn {
		client, server := net.Pipe()
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.serve(server)
		}()
		t.Cleanup(func() { _ = server.Close() })
		conn, err := kip848.Dial(context.Background(), pipeDialer{client}, "fake:9092", "test", 5*time.Second)
		require.NoError(t, err)
		return conn
	}
	t.Cleanup(func() {
		close(f.stop)
		wg.Wait()
	})
	m.coordMu.Lock()
	m.coord = &coordinator{id: 1, addr: "fake:9092", ctrl: sarama.NewBroker("fake:9092"), ctrlT: newTracker(m.cfg, time.Second), fetchVersion: 5,
		consumer: &consumerConns{t: newTracker(m.cfg, time.Second), conn: dial(), hb: dial(), hbVersion: 1}}
	m.coordMu.Unlock()
	// Close the member while the fake still serves it (cleanups run last
	// registered first), so that its leave is answered instead of retried
	// until Close's leave timeout (5 s). A member that dropped the fake (a
	// request of its was aborted) would look for a coordinator at brokers
	// that do not exist: it leaves nothing, as a crashed one.
	t.Cleanup(func() {
		m.coordMu.Lock()
		dropped := m.coord == nil
		m.coordMu.Unlock()
		if dropped {
			m.consumer.mu.Lock()
			m.consumer.epoch = 0
			m.consumer.mu.Unlock()
		}
		_ = m.Close()
	})
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
			resp := &kip848.HeartbeatResponse{MemberID: &req.MemberID, MemberEpoch: req.MemberEpoch}
			if req.MemberEpoch >= 0 { // not leaving: the test answers
				select {
				case f.reqs <- req:
				case <-f.stop:
					return
				}
				select {
				case resp = <-f.answers:
				case <-f.stop:
					return
				}
			}
			body = append([]byte{0}, resp.Encode()...) // response header v1: no tags
		case kip848.APIKeyOffsetCommit:
			f.commits <- struct{}{}
			<-f.stop
			return
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
