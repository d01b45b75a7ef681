package main

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
)

// Standard output, buffered without weakening at-least-once.
//
// Kafka's console consumer flushes System.out after every message: one
// write call per message. When stdout is not a terminal, this one formats
// messages into a buffer and writes it out when it is full, at most
// outputLinger after the first message put into it, and before exit. What
// gets committed is not what the streams handed out but what has been
// written out: output records, per partition, the offset after the last
// message written out, and commits (committer) take their offsets from
// there. A message still in the buffer is never committed, whatever the
// connector counts as consumed. When a write fails after taking part of
// the buffer (| head exited), the messages it took whole count as written
// out and the one it cut does not.

const (
	// outputBufferSize is the size at which the buffer is written out.
	outputBufferSize = 64 << 10
	// outputLinger bounds how long a message waits in the buffer, so that
	// output keeps up with a topic that receives few messages.
	outputLinger = 5 * time.Millisecond
)

// errOutput ends consumption when standard output fails.
var errOutput = errors.New("console-consumer: standard output failed")

// position is the offset after the last message of one partition that
// has been put into the buffer.
type position struct {
	topic     string
	partition int32
	next      int64
}

// mark is where one message ends in the buffer: when a write fails after
// taking part of the buffer (the reader of a pipe exited), the messages
// that ended within what it took were written out whole.
type mark struct {
	end int // len(buf) after the message
	position
}

// output is standard output with its buffer and the positions of what has
// been written out. add is called from the consuming goroutine; flush,
// written and close from any.
type output struct {
	w     io.Writer
	limit int // write out once the buffer holds this much; 0: every message

	mu      sync.Mutex // guards what follows; held while writing to w
	buf     []byte
	pending []position // partitions with messages in buf
	marks   []mark     // every message in buf, in order
	err     error      // the first write error; final

	writtenMu sync.Mutex
	written   map[connector.TopicPartition]int64

	dirty    chan struct{} // something was put into an empty buffer
	failed   chan struct{} // closed at the first write error
	stop     chan struct{}
	done     chan struct{} // the linger goroutine has ended
	stopOnce sync.Once
}

// newOutput buffers w unless buffered is false, when every message is
// written out at once (a terminal).
func newOutput(w io.Writer, buffered bool) *output {
	o := &output{
		w:       w,
		written: map[connector.TopicPartition]int64{},
		dirty:   make(chan struct{}, 1),
		failed:  make(chan struct{}),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	if !buffered {
		close(o.done)
		return o
	}
	o.limit = outputBufferSize
	o.buf = make([]byte, 0, outputBufferSize+4<<10)
	go o.lingerLoop()
	return o
}

// Failed is closed when writing to standard output has failed.
func (o *output) Failed() <-chan struct{} { return o.failed }

// add formats m into the buffer with f and writes the buffer out when it
// is full (or at once, unbuffered). A formatting error comes back as
// formatErr: what f appended before failing stays, as Kafka leaves it
// written; m then counts as written out only when skip is set. writeErr
// is the error of standard output, final.
func (o *output) add(m *connector.Message, f messageFormatter, skip bool) (formatErr, writeErr error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return nil, o.err
	}
	wasEmpty := len(o.buf) == 0
	o.buf, formatErr = f.format(o.buf, m)
	if formatErr == nil || skip {
		o.track(m)
	}
	if len(o.buf) >= o.limit {
		return formatErr, o.flushLocked()
	}
	if wasEmpty {
		select {
		case o.dirty <- struct{}{}:
		default:
		}
	}
	return formatErr, nil
}

// track records that m is in the buffer. Messages come in runs of one
// partition, so the last position is usually the one to move.
func (o *output) track(m *connector.Message) {
	o.marks = append(o.marks, mark{end: len(o.buf), position: position{topic: m.Topic, partition: m.Partition, next: m.Offset + 1}})
	if n := len(o.pending); n > 0 {
		if p := &o.pending[n-1]; p.partition == m.Partition && p.topic == m.Topic {
			p.next = m.Offset + 1
			return
		}
	}
	for i := range o.pending {
		if p := &o.pending[i]; p.partition == m.Partition && p.topic == m.Topic {
			p.next = m.Offset + 1
			return
		}
	}
	o.pending = append(o.pending, position{topic: m.Topic, partition: m.Partition, next: m.Offset + 1})
}

// flush writes the buffer out.
func (o *output) flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.flushLocked()
}

func (o *output) flushLocked() error {
	if o.err != nil {
		return o.err
	}
	if len(o.buf) > 0 {
		if n, err := o.w.Write(o.buf); err != nil {
			o.err = err
			o.recordWhole(n)
			close(o.failed)
			return err
		}
		o.buf = o.buf[:0]
	}
	o.marks = o.marks[:0]
	if len(o.pending) > 0 {
		o.writtenMu.Lock()
		for _, p := range o.pending {
			o.written[connector.TopicPartition{Topic: p.topic, Partition: p.partition}] = p.next
		}
		o.writtenMu.Unlock()
		o.pending = o.pending[:0]
	}
	return nil
}

// recordWhole records as written out the messages of the buffer that end
// within its first n bytes, which a failed write took: the reader may have
// them, and a message whose bytes were all written counts, one cut short
// does not.
func (o *output) recordWhole(n int) {
	o.writtenMu.Lock()
	defer o.writtenMu.Unlock()
	for _, m := range o.marks {
		if m.end > n {
			break
		}
		o.written[connector.TopicPartition{Topic: m.topic, Partition: m.partition}] = m.next
	}
	o.marks = o.marks[:0]
}

// writtenOffsets returns, for each of tps that has any, the offset after
// the last message written out. It never waits for standard output.
func (o *output) writtenOffsets(tps map[connector.TopicPartition]bool) map[connector.TopicPartition]int64 {
	o.writtenMu.Lock()
	defer o.writtenMu.Unlock()
	offsets := map[connector.TopicPartition]int64{}
	for tp := range tps {
		if off, ok := o.written[tp]; ok {
			offsets[tp] = off
		}
	}
	return offsets
}

// forget drops what was written out of tps, partitions this member owned
// before, lost and owns again: another member may have committed beyond it
// meanwhile, and a commit of it would move the group back.
func (o *output) forget(tps map[connector.TopicPartition]bool) {
	o.writtenMu.Lock()
	defer o.writtenMu.Unlock()
	for tp := range tps {
		delete(o.written, tp)
	}
}

// lingerLoop writes the buffer out outputLinger after something was put
// into it, until close.
func (o *output) lingerLoop() {
	defer close(o.done)
	timer := time.NewTimer(outputLinger)
	timer.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-o.dirty:
		}
		timer.Reset(outputLinger)
		select {
		case <-o.stop:
			timer.Stop()
			return
		case <-timer.C:
		}
		_ = o.flush() // an error is kept and reported by the next add
	}
}

// close stops the linger goroutine and writes out what is left.
func (o *output) close() error {
	o.stopOnce.Do(func() { close(o.stop) })
	<-o.done
	return o.flush()
}
