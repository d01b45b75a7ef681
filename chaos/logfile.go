package chaos

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// Kinds of member log records.
const (
	// RecStart: the member connected; Slot, Inc, ConsumerID, PID, Wildcard.
	RecStart = "start"
	// RecAssign: BeforeStartingFetchers; Parts are the partitions it gains.
	RecAssign = "assign"
	// RecRelease: BeforeReleasingPartitions; Parts and Lost.
	RecRelease = "release"
	// RecDelivery: Next returned a message; Topic, Partition, Offset, Seq.
	RecDelivery = "d"
	// RecError: an error from Errors(), from Next, or of the member itself.
	RecError = "error"
	// RecCommitFailed: a commit failed at the member (a *connector.CommitError
	// on Errors() or from Shutdown); Offsets are the offsets it tried to
	// write, by topic and partition. It follows the error's RecError.
	RecCommitFailed = "commit-failed"
	// RecPanic: a recovered panic; Err and Stack.
	RecPanic = "panic"
	// RecExit: the member is about to exit; Clean, Err, Goroutines, Leaked.
	RecExit = "exit"
)

// Record is one line of a member's log. TS is the wall clock in Unix
// nanoseconds when the event happened (for a delivery: when Next returned).
type Record struct {
	Kind string `json:"k"`
	TS   int64  `json:"ts"`

	Topic     string `json:"t,omitempty"`
	Partition int32  `json:"p,omitempty"`
	Offset    int64  `json:"o,omitempty"`
	Seq       int64  `json:"s,omitempty"`

	Slot       int    `json:"slot,omitempty"`
	Inc        int    `json:"inc,omitempty"`
	ConsumerID string `json:"id,omitempty"`
	PID        int    `json:"pid,omitempty"`
	Wildcard   bool   `json:"wildcard,omitempty"`

	Parts map[string][]int32 `json:"parts,omitempty"`
	Lost  bool               `json:"lost,omitempty"`
	// Offsets are a failed commit's offsets, by topic and partition.
	Offsets map[string]map[int32]int64 `json:"offsets,omitempty"`

	Err   string `json:"err,omitempty"`
	Stack string `json:"stack,omitempty"`
	Clean bool   `json:"clean,omitempty"`
	// Replaced is set on an exit record whose member ended because another
	// process took its group.instance.id (Kafka mode's FENCED_INSTANCE_ID).
	Replaced   bool   `json:"replaced,omitempty"`
	Goroutines int    `json:"goroutines,omitempty"`
	Leaked     string `json:"leaked,omitempty"`
}

// flushEvery bounds how long a record may sit in a member's buffer.
const flushEvery = 100 * time.Millisecond

// logWriter appends records to a member's log. Records are buffered; Flush
// pushes them to the kernel (which keeps them if the process is killed), and
// a background flush runs every flushEvery. It is safe for concurrent use.
type logWriter struct {
	mu  sync.Mutex
	f   *os.File
	bw  *bufio.Writer
	err error
	buf []byte

	stop chan struct{}
	done chan struct{}
}

func createLog(path string) (*logWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	w := &logWriter{f: f, bw: bufio.NewWriterSize(f, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go w.flushLoop()
	return w, nil
}

func (w *logWriter) flushLoop() {
	defer close(w.done)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			_ = w.Flush()
		}
	}
}

// Delivery appends a delivery record.
func (w *logWriter) Delivery(ts int64, topic string, partition int32, offset, seq int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.buf[:0]
	b = append(b, `{"k":"d","ts":`...)
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendQuote(b, topic) // Kafka topic names are JSON-safe ASCII
	b = append(b, `,"p":`...)
	b = strconv.AppendInt(b, int64(partition), 10)
	b = append(b, `,"o":`...)
	b = strconv.AppendInt(b, offset, 10)
	b = append(b, `,"s":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, "}\n"...)
	w.buf = b
	w.writeLocked(b)
}

// Write appends r.
func (w *logWriter) Write(r Record) {
	data, err := json.Marshal(r)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.err = errors.Join(w.err, err)
		return
	}
	w.writeLocked(append(data, '\n'))
}

func (w *logWriter) writeLocked(b []byte) {
	if _, err := w.bw.Write(b); err != nil && w.err == nil {
		w.err = err
	}
}

// Flush hands the buffered records to the kernel.
func (w *logWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.bw.Buffered() > 0 {
		if err := w.bw.Flush(); err != nil && w.err == nil {
			w.err = err
		}
	}
	return w.err
}

// StopFlusher ends the background flush; writes still work and Close
// flushes them.
func (w *logWriter) StopFlusher() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// Close flushes and closes the log.
func (w *logWriter) Close() error {
	w.StopFlusher()
	err := w.Flush()
	return errors.Join(err, w.f.Close())
}

// maxLine bounds one log line (a leak report with many stacks is long).
const maxLine = 64 << 20

// ReadLog calls fn for every record of the log at path, in order. A last
// line without its newline (a member killed while writing) is ignored and
// counted in truncated.
func ReadLog(path string, fn func(*Record) error) (truncated int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var rec Record
	line := 0
	for {
		data, err := readLine(r)
		if err == io.EOF {
			if len(data) > 0 {
				truncated++
			}
			return truncated, nil
		}
		if err != nil {
			return truncated, fmt.Errorf("chaos: read %s: %w", path, err)
		}
		line++
		rec = Record{}
		if err := json.Unmarshal(data, &rec); err != nil {
			return truncated, fmt.Errorf("chaos: %s line %d: %w", path, line, err)
		}
		if err := fn(&rec); err != nil {
			return truncated, err
		}
	}
}

// readLine returns the next line without its newline; io.EOF with the
// partial rest when the input ends without one.
func readLine(r *bufio.Reader) ([]byte, error) {
	var long []byte
	for {
		part, err := r.ReadSlice('\n')
		switch {
		case err == nil:
			if long != nil {
				return append(long, part[:len(part)-1]...), nil
			}
			return part[:len(part)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			long = append(long, part...)
			if len(long) > maxLine {
				return nil, fmt.Errorf("line longer than %d bytes", maxLine)
			}
		default:
			return append(long, part...), err
		}
	}
}

// logTail reads a log that is still being written, a batch of complete
// lines at a time.
type logTail struct {
	path string
	off  int64
	rest []byte
}

// poll calls fn for every complete record written since the last poll.
func (t *logTail) poll(fn func(*Record)) error {
	f, err := os.Open(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	t.off += int64(len(data))
	data = append(t.rest, data...)
	var rec Record
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		rec = Record{}
		if json.Unmarshal(data[:i], &rec) == nil {
			fn(&rec)
		}
		data = data[i+1:]
	}
	t.rest = append(t.rest[:0], data...)
	return nil
}
