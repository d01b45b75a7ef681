package connector

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// stwJavaRelease is the kafka-clients release of the Java consumer that
// BenchmarkStopTheWorld runs against each of rbBrokers: the broker's own.
var stwJavaRelease = map[string]string{"kafka3.9": "3.9", "kraft4": "4"}

// stwJavaRow runs the row's members and its control as Kafka Java
// consumers (kafka-clients of release, "3.9" or "4") in one JVM, a
// StopTheWorldProbe (testdata/StopTheWorldProbe.java) started with the
// control, with the group protocol protocol ("range", "cooperative-sticky"
// or "consumer", as the probe names them). A member joins when the probe
// is told to (it then creates its KafkaConsumer, subscribes and polls) and
// leaves when its consumer is closed (it commits and leaves the group). A
// delivery is timed by the probe when a poll returns records of the
// partition, and the member's partitions when a rebalance callback ran
// (onPartitionsAssigned, onPartitionsRevoked, onPartitionsLost).
func stwJavaRow(b *testing.B, c *testcluster.Cluster, release, protocol string) stwRow {
	if release == "" || protocol == "" {
		b.Fatalf("no Java consumer for release %q, protocol %q", release, protocol)
	}
	var probe *stwProbe
	bootstrap := strings.Join(c.BrokerAddrs(), ",")
	return stwRow{
		control: func(topic, group string, rec *gapRecorder) (func(), error) {
			var err error
			probe, err = startSTWProbe(release, bootstrap, topic, protocol)
			if err != nil {
				return nil, err
			}
			if _, err := probe.join("control", group, 0, rec, nil); err != nil {
				probe.stop()
				return nil, err
			}
			// Like stwControl, return once the control delivers.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if _, err := rec.waitSettled(ctx, []int{0}, time.Now()); err != nil {
				probe.stop()
				return nil, fmt.Errorf("%w; the probe's stderr:\n%s", err, probe.stderr.String())
			}
			return probe.stop, nil
		},
		member: func(topic, group string, n int, rec *gapRecorder) (*stwMember, error) {
			owned := &ownedLog{topic: topic}
			leave, err := probe.join(strconv.Itoa(n), group, n, rec, owned)
			if err != nil {
				return nil, err
			}
			return &stwMember{n: n, owned: owned, leave: leave}, nil
		},
	}
}

// stwProbe is a running StopTheWorldProbe and the reader of its output.
type stwProbe struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stdin  io.WriteCloser
	stderr testcluster.LockedBuffer
	exited chan struct{} // closed when the output ends and the JVM has exited

	mu      sync.Mutex
	members map[string]*stwProbeMember
	errs    []string // the probe's error lines
}

// stwProbeMember is where one Java consumer's lines go.
type stwProbeMember struct {
	n     int
	rec   *gapRecorder
	owned *ownedLog // nil for the control
	left  chan struct{}
}

// startSTWProbe starts the probe's JVM and returns once it reads commands.
func startSTWProbe(release, bootstrap, topic, protocol string) (*stwProbe, error) {
	// From the repository's root, so that the test binary may run from
	// anywhere in it (go test runs it in connector/).
	root, err := testcluster.RepoRoot()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd, err := testcluster.ClientProgram(ctx, release, filepath.Join(root, "connector", "testdata", "StopTheWorldProbe.java"), bootstrap, topic, protocol)
	if err != nil {
		cancel()
		return nil, err
	}
	p := &stwProbe{cmd: cmd, cancel: cancel, exited: make(chan struct{}), members: map[string]*stwProbeMember{}}
	cmd.Stderr = &p.stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		p.stdin, err = cmd.StdinPipe()
	}
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("StopTheWorldProbe: %w", err)
	}
	ready := make(chan struct{})
	go func() {
		defer close(p.exited)
		p.read(out, ready)
		_ = cmd.Wait()
	}()
	select {
	case <-ready:
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("StopTheWorldProbe exited before it was ready: %v; stderr:\n%s", cmd.ProcessState, p.stderr.String())
	case <-time.After(2 * time.Minute):
		p.stop()
		return nil, fmt.Errorf("StopTheWorldProbe not ready after 2 minutes; stderr:\n%s", p.stderr.String())
	}
}

// read dispatches the probe's lines until its output ends.
func (p *stwProbe) read(out io.Reader, ready chan struct{}) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "ready":
			close(ready)
			continue
		case "error":
			p.mu.Lock()
			p.errs = append(p.errs, sc.Text())
			p.mu.Unlock()
			continue
		}
		if len(f) < 2 {
			continue
		}
		p.mu.Lock()
		m := p.members[f[1]]
		p.mu.Unlock()
		if m == nil {
			continue
		}
		switch f[0] {
		case "left":
			close(m.left)
		case "r", "owned":
			if len(f) < 3 {
				continue
			}
			us, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				continue
			}
			at := time.UnixMicro(us)
			ps := make([]int32, 0, len(f)-3)
			for _, s := range f[3:] {
				if v, err := strconv.ParseInt(s, 10, 32); err == nil {
					ps = append(ps, int32(v))
				}
			}
			if f[0] == "owned" {
				if m.owned != nil {
					m.owned.record(at, ps)
				}
				continue
			}
			for _, part := range ps {
				m.rec.seeAt(m.n, part, at)
			}
		}
	}
}

// join has the probe start the consumer id in group, its deliveries
// recorded into rec as member n and its partitions into owned (if not
// nil), and returns how to make it leave.
func (p *stwProbe) join(id, group string, n int, rec *gapRecorder, owned *ownedLog) (leave func(ctx context.Context) error, err error) {
	m := &stwProbeMember{n: n, rec: rec, owned: owned, left: make(chan struct{})}
	p.mu.Lock()
	p.members[id] = m
	p.mu.Unlock()
	if err := p.send("join " + id + " " + group); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		if err := p.send("leave " + id); err != nil {
			return err
		}
		select {
		case <-m.left:
			return p.err(id)
		case <-p.exited:
			return fmt.Errorf("StopTheWorldProbe exited before member %s left; stderr:\n%s", id, p.stderr.String())
		case <-ctx.Done():
			return fmt.Errorf("Java member %s did not close: %w", id, ctx.Err())
		}
	}, nil
}

func (p *stwProbe) send(line string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		return fmt.Errorf("StopTheWorldProbe %q: %w; stderr:\n%s", line, err, p.stderr.String())
	}
	return nil
}

// err returns the probe's error lines about member id, if any.
func (p *stwProbe) err(id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, line := range p.errs {
		if f := strings.Fields(line); len(f) > 1 && (f[1] == id || f[1] == "-") {
			errs = append(errs, errors.New(line))
		}
	}
	return errors.Join(errs...)
}

// stop ends the probe: its stdin is closed, so that it closes the
// consumers still running and exits; after a minute the JVM is killed.
func (p *stwProbe) stop() {
	p.mu.Lock()
	_ = p.stdin.Close()
	p.mu.Unlock()
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
	}
	p.cancel()
	<-p.exited
}
