package testcluster

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// maxPending is how many bytes a link holds per direction while it is
// blackholed; past that it stops reading, so the sender's socket buffers
// fill as they would behind a real partition.
const maxPending = 1 << 20

// errAborted marks a direction whose source ended its connection with an
// error (a TCP reset, or a close that discarded unsent data), as opposed to
// a clean FIN (io.EOF).
var errAborted = errors.New("testcluster: the sender aborted its connection")

// link relays one TCP connection of a proxy: a is the accepted side, b the
// side the proxy dials. It models a network path that can be cut (held):
// while held, it keeps reading both sides into per-direction pending
// buffers and delivers nothing; when released, it delivers what is pending,
// then the source's FIN, unless the source aborted meanwhile: then the
// pending bytes are dropped and the destination gets a reset, as a
// receiver behind a healed partition would see.
//
// A link created held dials b only once it is released, and not at all if
// a has ended by then: a connection attempt made during a partition never
// reaches the server.
type link struct {
	a    net.Conn
	dial func() (net.Conn, error)

	mu     sync.Mutex
	cond   *sync.Cond
	b      net.Conn // nil until dialed
	held   bool
	delay  time.Duration
	closed bool
	up     pipe // a -> b
	down   pipe // b -> a

	done    chan struct{} // closed when the link is shut
	writers int           // running writer goroutines
	onDone  func(*link)
	wg      *sync.WaitGroup
}

// pipe is one direction of a link.
type pipe struct {
	pending []byte
	end     error // nil while the source is open; io.EOF or errAborted
}

// newLink starts relaying a. initial is sent to b first (bytes the proxy
// already read from a). onDone runs once the link has ended; every
// goroutine the link starts is counted in wg.
func newLink(a net.Conn, dial func() (net.Conn, error), initial []byte, held bool, delay time.Duration, wg *sync.WaitGroup, onDone func(*link)) *link {
	l := &link{a: a, dial: dial, held: held, delay: delay, done: make(chan struct{}), onDone: onDone, wg: wg}
	l.cond = sync.NewCond(&l.mu)
	l.up.pending = append([]byte(nil), initial...)
	wg.Add(2)
	go l.read(a, &l.up)
	go l.connect()
	return l
}

// setHeld cuts (true) or restores (false) the path.
func (l *link) setHeld(held bool) {
	l.mu.Lock()
	l.held = held
	l.mu.Unlock()
	l.cond.Broadcast()
}

func (l *link) setDelay(d time.Duration) {
	l.mu.Lock()
	l.delay = d
	l.mu.Unlock()
}

// reset ends both sides at once with a TCP reset.
func (l *link) reset() { l.shut(true) }

// close ends both sides.
func (l *link) close() { l.shut(false) }

func (l *link) shut(rst bool) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	b := l.b
	close(l.done)
	l.mu.Unlock()
	l.cond.Broadcast()
	for _, c := range []net.Conn{l.a, b} {
		if c == nil {
			continue
		}
		if rst {
			resetConn(c)
		} else {
			c.Close()
		}
	}
}

// connect dials b once the path is open, then relays both ways.
func (l *link) connect() {
	defer l.wg.Done()
	l.mu.Lock()
	waited := false
	for l.held && !l.closed && l.up.end == nil {
		waited = true
		l.cond.Wait()
	}
	// A client that ends its connection before the path is open has
	// given up; one that ends it right after sending, on an open path,
	// has not.
	gaveUp := l.closed || (l.held || waited) && l.up.end != nil
	l.mu.Unlock()
	if gaveUp {
		// Closed, or the client left before its connection could reach
		// the server: the server never sees it.
		l.shut(true)
		l.finish()
		return
	}
	b, err := l.dial()
	if err != nil {
		l.shut(true)
		l.finish()
		return
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		b.Close()
		l.finish()
		return
	}
	l.b = b
	l.writers = 2
	l.mu.Unlock()
	l.wg.Add(3)
	go l.read(b, &l.down)
	go l.write(b, &l.up)
	go l.write(l.a, &l.down)
}

// read moves src's bytes into p until src ends.
func (l *link) read(src net.Conn, p *pipe) {
	defer l.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		l.mu.Lock()
		if n > 0 {
			p.pending = append(p.pending, buf[:n]...)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				p.end = io.EOF
			} else {
				p.end = errAborted
				if l.held {
					// Bytes still in the partition when their
					// sender aborts are lost with the connection.
					p.pending = nil
				}
			}
		}
		l.cond.Broadcast()
		for err == nil && len(p.pending) >= maxPending && !l.closed {
			l.cond.Wait()
		}
		stop := err != nil || l.closed
		l.mu.Unlock()
		if stop {
			return
		}
	}
}

// write delivers p to dst whenever the path is open.
func (l *link) write(dst net.Conn, p *pipe) {
	defer l.wg.Done()
	defer l.finishWriter()
	for {
		l.mu.Lock()
		for !l.closed && (l.held || len(p.pending) == 0 && p.end == nil) {
			l.cond.Wait()
		}
		if l.closed {
			l.mu.Unlock()
			return
		}
		data, end, delay := p.pending, p.end, l.delay
		p.pending = nil
		l.mu.Unlock()
		l.cond.Broadcast() // a reader may wait for room
		if len(data) > 0 {
			if delay > 0 {
				select {
				case <-time.After(delay):
				case <-l.done:
					return
				}
			}
			if _, err := dst.Write(data); err != nil {
				// The receiver is gone: so is the connection.
				l.shut(true)
				return
			}
		}
		switch end {
		case nil:
			continue
		case io.EOF:
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			} else {
				dst.Close()
			}
		default:
			l.shut(true)
		}
		return
	}
}

// finishWriter ends the link when both directions are done.
func (l *link) finishWriter() {
	l.mu.Lock()
	l.writers--
	last := l.writers == 0
	l.mu.Unlock()
	if last {
		l.shut(false)
		l.finish()
	}
}

func (l *link) finish() {
	if l.onDone != nil {
		l.onDone(l)
	}
}

func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

// heldBytes is how many bytes the link holds in both directions.
func (l *link) heldBytes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.up.pending) + len(l.down.pending)
}
