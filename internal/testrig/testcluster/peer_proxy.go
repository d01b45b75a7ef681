package testcluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// ZooKeeper's connection protocol between the servers of an ensemble, as
// far as a proxy needs it to tell which server a connection comes from
// (ZooKeeper 3.8, the one in the Kafka 3.9 jars; the layouts are also
// those of 3.5 to 3.9):
//
//   - A connection to a server's election port starts with the initiator's
//     identification: a long protocol version, PROTOCOL_VERSION_V1 (-65536)
//     or, with multi-address enabled, V2 (-65535); its long server id; an
//     int length and that many bytes of its own election address(es),
//     "host:port" joined by "|". The receiver with the larger id drops a
//     connection from a smaller id and connects back to the address
//     announced there. Servers before 3.5 sent the long server id alone
//     (non-negative).
//   - A learner's connection to the leader's quorum port starts with a
//     QuorumPacket in jute: int type, long zxid, buffer data (int length,
//     bytes), whose data is a LearnerInfo beginning with the long server id.
const (
	electionProtocolV1 = -65536
	electionProtocolV2 = -65535
	// maxElectionAddr is ZooKeeper's own bound on the announced address.
	maxElectionAddr = 2048
	// peerHeaderTimeout bounds the wait for a connection's first bytes;
	// ZooKeeper sends them right after connecting, but a loaded machine
	// can take long.
	peerHeaderTimeout = 30 * time.Second
	// learnerDialPatience is how long a quorum port's proxy keeps trying
	// to reach a leader that does not listen yet (ZooKeeper's learner
	// tries 5 times, a second apart).
	learnerDialPatience = 5 * time.Second
)

// peerKind is which of a server's peer ports a proxy stands in front of.
type peerKind int

const (
	electionPeerPort peerKind = iota
	quorumPeerPort
)

func (k peerKind) String() string {
	if k == electionPeerPort {
		return "election"
	}
	return "quorum"
}

// errPeerHeader is wrapped by readPeerHeader's errors.
var errPeerHeader = errors.New("testcluster: not a ZooKeeper peer connection")

// readPeerHeader reads the identification a ZooKeeper server sends first
// on a connection to a peer port of kind and returns the bytes to forward
// in its place and the sender's server id. electionAddr gives the address
// to announce for a server id instead of the one it announced itself (the
// proxy in front of its election port), so that a connect-back goes
// through the proxies too; "" keeps the announced one.
func readPeerHeader(r io.Reader, kind peerKind, electionAddr func(sid int64) string) (header []byte, sid int64, err error) {
	if kind == quorumPeerPort {
		var b [24]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, 0, fmt.Errorf("%w: learner's first packet: %w", errPeerHeader, err)
		}
		dataLen := int32(binary.BigEndian.Uint32(b[12:16]))
		if dataLen < 8 {
			return nil, 0, fmt.Errorf("%w: learner's first packet carries %d bytes of LearnerInfo, want at least the 8 of a server id", errPeerHeader, dataLen)
		}
		return b[:], int64(binary.BigEndian.Uint64(b[16:24])), nil
	}
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return nil, 0, fmt.Errorf("%w: election identification: %w", errPeerHeader, err)
	}
	version := int64(binary.BigEndian.Uint64(b[:]))
	if version >= 0 {
		// A server before 3.5: the id alone.
		return b[:], version, nil
	}
	if version != electionProtocolV1 && version != electionProtocolV2 {
		return nil, 0, fmt.Errorf("%w: election protocol version %d", errPeerHeader, version)
	}
	var rest [12]byte
	if _, err := io.ReadFull(r, rest[:]); err != nil {
		return nil, 0, fmt.Errorf("%w: election identification: %w", errPeerHeader, err)
	}
	sid = int64(binary.BigEndian.Uint64(rest[:8]))
	n := int32(binary.BigEndian.Uint32(rest[8:]))
	if n <= 0 || n > maxElectionAddr {
		return nil, 0, fmt.Errorf("%w: election address of %d bytes", errPeerHeader, n)
	}
	addr := make([]byte, n)
	if _, err := io.ReadFull(r, addr); err != nil {
		return nil, 0, fmt.Errorf("%w: election address: %w", errPeerHeader, err)
	}
	if a := electionAddr(sid); a != "" {
		addr = []byte(a)
	}
	header = make([]byte, 0, 20+len(addr))
	header = binary.BigEndian.AppendUint64(header, uint64(version))
	header = binary.BigEndian.AppendUint64(header, uint64(sid))
	header = binary.BigEndian.AppendUint32(header, uint32(len(addr)))
	return append(header, addr...), sid, nil
}

// quorumNet is the network between the servers of an ensemble: a proxy in
// front of every server's election port and quorum port, which the other
// servers' zoo.cfg name instead of the real ports. It knows from the first
// bytes of each connection which server opened it, so it can cut one
// server off from all the others while its client port stays reachable.
type quorumNet struct {
	mu       sync.Mutex
	isolated []bool
	election []*peerProxy // by server index
	quorum   []*peerProxy
	links    map[*link]peerPath
	opening  map[net.Conn]struct{} // accepted, first bytes not read yet
	closed   bool

	wg sync.WaitGroup
}

// peerPath is the pair of servers a peer connection joins.
type peerPath struct{ from, to int }

// peerProxy stands in front of one peer port of one server.
type peerProxy struct {
	kind   peerKind
	to     int    // server index
	target string // the real port
	ln     net.Listener
}

// newQuorumNet listens on a free loopback port for each of the given real
// election and quorum ports (by server index); start relays.
func newQuorumNet(electionTargets, quorumTargets []string) (*quorumNet, error) {
	q := &quorumNet{isolated: make([]bool, len(electionTargets)), links: map[*link]peerPath{}, opening: map[net.Conn]struct{}{}}
	for i := range electionTargets {
		for _, pp := range []struct {
			kind   peerKind
			target string
			list   *[]*peerProxy
		}{{electionPeerPort, electionTargets[i], &q.election}, {quorumPeerPort, quorumTargets[i], &q.quorum}} {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				q.close()
				return nil, err
			}
			*pp.list = append(*pp.list, &peerProxy{kind: pp.kind, to: i, target: pp.target, ln: ln})
		}
	}
	return q, nil
}

// start accepts connections on every proxy.
func (q *quorumNet) start() {
	for _, p := range append(append([]*peerProxy(nil), q.election...), q.quorum...) {
		q.wg.Add(1)
		go q.accept(p)
	}
}

// electionAddr and quorumAddr are the proxies' host:port for server i.
func (q *quorumNet) electionAddr(i int) string { return q.election[i].ln.Addr().String() }
func (q *quorumNet) quorumAddr(i int) string   { return q.quorum[i].ln.Addr().String() }

func (q *quorumNet) accept(p *peerProxy) {
	defer q.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		q.wg.Add(1)
		go q.serve(p, c)
	}
}

// serve identifies the server a connection comes from and relays it,
// unless either end is isolated: then the connection is refused (reset).
func (q *quorumNet) serve(p *peerProxy, c net.Conn) {
	defer q.wg.Done()
	q.mu.Lock()
	refuse := q.closed || q.isolated[p.to]
	if !refuse {
		q.opening[c] = struct{}{}
	}
	q.mu.Unlock()
	if refuse {
		resetConn(c)
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(peerHeaderTimeout))
	header, sid, err := readPeerHeader(c, p.kind, func(sid int64) string {
		if i, ok := q.index(sid); ok {
			return q.electionAddr(i)
		}
		return ""
	})
	_ = c.SetReadDeadline(time.Time{})
	from, ok := q.index(sid)
	ok = ok && err == nil && from != p.to
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.opening, c)
	if q.closed || !ok || q.isolated[from] || q.isolated[p.to] {
		resetConn(c)
		return
	}
	l := newLink(c, func() (net.Conn, error) { return q.dial(p) }, header, false, 0, &q.wg, q.untrack)
	q.links[l] = peerPath{from: from, to: p.to}
}

// dial connects to the real port behind p. A learner connects to the
// quorum port of the server it has just elected, which may not listen yet:
// without the proxy its connection would be refused and it would try
// again a moment later, but the proxy has already accepted it, so the
// proxy tries again in its place, for up to learnerDialPatience.
func (q *quorumNet) dial(p *peerProxy) (net.Conn, error) {
	deadline := time.Now().Add(learnerDialPatience)
	for {
		c, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err == nil || p.kind != quorumPeerPort || time.Now().After(deadline) || q.cut(-1, p.to) {
			return c, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// index maps a ZooKeeper server id (myid) to a server index.
func (q *quorumNet) index(sid int64) (int, bool) {
	i := sid - 1
	return int(i), i >= 0 && i < int64(len(q.isolated))
}

// cut reports whether the path between from and to is cut (from < 0:
// whether to is isolated).
func (q *quorumNet) cut(from, to int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed || q.isolated[to] || from >= 0 && q.isolated[from]
}

func (q *quorumNet) untrack(l *link) {
	q.mu.Lock()
	delete(q.links, l)
	q.mu.Unlock()
}

// setIsolated cuts server i off from every other server, or heals it.
// Open connections to and from it go silent (see Blackhole); new ones are
// refused. Healing releases the connections whose other end is not
// isolated.
func (q *quorumNet) setIsolated(i int, isolated bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.isolated[i] = isolated
	for l, path := range q.links {
		l.setHeld(q.isolated[path.from] || q.isolated[path.to])
	}
}

// isIsolated reports whether server i is cut off.
func (q *quorumNet) isIsolated(i int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.isolated[i]
}

// close stops every proxy and ends every connection. It is idempotent.
func (q *quorumNet) close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	links := make([]*link, 0, len(q.links))
	for l := range q.links {
		links = append(links, l)
	}
	for c := range q.opening {
		c.Close()
	}
	q.mu.Unlock()
	for _, p := range append(append([]*peerProxy(nil), q.election...), q.quorum...) {
		p.ln.Close()
	}
	for _, l := range links {
		l.close()
	}
	q.wg.Wait()
}
