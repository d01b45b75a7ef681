package connector

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// deliveries records, for BenchmarkRebalanceLatency, which member
// delivered which partition's messages and when.
type deliveries struct {
	partitions int
	mu         sync.Mutex
	last       map[int][]int64     // member -> partition -> latest send time delivered
	first      map[int][]time.Time // member -> partition -> first delivery sent at or after t0
	t0         int64               // Unix nanoseconds; 0 before the first mark
}

func newDeliveries(partitions int) *deliveries {
	return &deliveries{partitions: partitions, last: map[int][]int64{}, first: map[int][]time.Time{}}
}

// see records that member delivered a message of partition sent at sent
// (Unix nanoseconds), now.
func (d *deliveries) see(member int, partition int32, sent int64) {
	now := time.Now()
	if partition < 0 || int(partition) >= d.partitions {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	last := d.last[member]
	if last == nil {
		last = make([]int64, d.partitions)
		d.last[member] = last
	}
	last[partition] = max(last[partition], sent)
	if d.t0 != 0 && sent >= d.t0 {
		first := d.first[member]
		if first == nil {
			first = make([]time.Time, d.partitions)
			d.first[member] = first
		}
		if first[partition].IsZero() {
			first[partition] = now
		}
	}
}

// mark starts an op: it forgets the first deliveries and returns t0.
func (d *deliveries) mark() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	t0 := time.Now()
	d.t0 = t0.UnixNano()
	clear(d.first)
	return t0
}

// settled returns each partition's owner when, over the last rbWindow
// (which must start at or after since), every partition was delivered by
// exactly one member, a member of live, and every member of live
// delivered some partition.
func (d *deliveries) settled(live []int, since time.Time) ([]int, bool) {
	now := time.Now()
	if now.Sub(since) < rbWindow {
		return nil, false
	}
	cutoff := now.Add(-rbWindow).UnixNano()
	d.mu.Lock()
	defer d.mu.Unlock()
	owners := make([]int, d.partitions)
	busy := map[int]bool{}
	for p := range d.partitions {
		owner, n := -1, 0
		for m, last := range d.last {
			if last[p] >= cutoff {
				owner = m
				n++
			}
		}
		if n != 1 || !slices.Contains(live, owner) {
			return nil, false
		}
		owners[p] = owner
		busy[owner] = true
	}
	return owners, len(busy) == len(live)
}

// waitSettled waits until settled(live, since) holds, and returns the
// owners.
func (d *deliveries) waitSettled(live []int, since time.Time) ([]int, error) {
	deadline := time.Now().Add(rbSettleTimeout)
	for {
		if owners, ok := d.settled(live, since); ok {
			return owners, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("members %v did not settle over %d partitions in %v: %s", live, d.partitions, rbSettleTimeout, d.describe())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// describe tells what each member delivered last, for errors.
func (d *deliveries) describe() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now().UnixNano()
	var sb strings.Builder
	for m, last := range d.last {
		fmt.Fprintf(&sb, "member %d, ms since the send of its latest delivery by partition:", m)
		for _, t := range last {
			if t == 0 {
				sb.WriteString(" -")
			} else {
				fmt.Fprintf(&sb, " %d", (now-t)/1e6)
			}
		}
		sb.WriteString("; ")
	}
	return sb.String()
}

// latency is the latest, over the partitions, of the first delivery by
// the partition's owner of a message sent at or after t0, less t0.
func (d *deliveries) latency(owners []int) (time.Duration, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var end time.Time
	for p, m := range owners {
		first := d.first[m]
		if first == nil || first[p].IsZero() {
			return 0, fmt.Errorf("partition %d: its owner %d delivered nothing sent after the leave", p, m)
		}
		if first[p].After(end) {
			end = first[p]
		}
	}
	return end.Sub(time.Unix(0, d.t0)), nil
}

// startTicks produces one message to every partition of topic every tick,
// its value the send time in Unix nanoseconds, until stop is called. stop
// returns how many ticks failed to be sent whole, with the first failure;
// a lost tick only makes the next one the first a new owner can deliver.
func startTicks(c *testcluster.Cluster, topic string, partitions int32, tick time.Duration) (stop func() (failed int, err error), err error) {
	cfg := c.ClientConfig()
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForLocal
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(c.BrokerAddrs(), cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var (
		sendErr error
		failed  int
	)
	go func() {
		defer close(done)
		t := time.NewTicker(tick)
		defer t.Stop()
		msgs := make([]*sarama.ProducerMessage, partitions)
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			v := sarama.ByteEncoder(strconv.AppendInt(nil, time.Now().UnixNano(), 10))
			for i := range msgs {
				msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: int32(i), Value: v}
			}
			if err := p.SendMessages(msgs); err != nil {
				failed++
				if sendErr == nil {
					sendErr = fmt.Errorf("ticks to %s: %w", topic, err)
				}
			}
		}
	}()
	return func() (int, error) {
		cancel()
		<-done
		return failed, errors.Join(sendErr, p.Close())
	}, nil
}

// rbConnector is a connector in the group, one stream read by one
// goroutine.
type rbConnector struct {
	n      int
	conn   *ConsumerConnector
	cancel context.CancelFunc
	done   chan struct{}
}

func startRBConnector(env *rbEnv, cfg Config, seq int) (rbMember, error) {
	conn, err := New(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &rbConnector{n: seq, conn: conn, cancel: cancel, done: make(chan struct{})}
	jctx, jcancel := context.WithTimeout(ctx, time.Minute)
	streams, err := conn.CreateMessageStreams(jctx, map[string]int{env.topic: 1})
	jcancel()
	if err != nil {
		close(m.done)
		m.stop()
		return nil, err
	}
	s := streams[env.topic][0]
	go func() {
		defer close(m.done)
		for {
			msg, err := s.Next(ctx)
			if err != nil {
				if errors.Is(err, ErrShutdown) || ctx.Err() != nil {
					break
				}
				continue // a partition's error; the iterator goes on
			}
			if sent, err := strconv.ParseInt(string(msg.Value), 10, 64); err == nil {
				env.seen.see(seq, msg.Partition, sent)
			}
		}
	}()
	return m, nil
}

func (m *rbConnector) seq() int { return m.n }

func (m *rbConnector) leave(ctx context.Context) error {
	err := m.conn.Shutdown(ctx)
	select {
	case <-m.done:
	case <-ctx.Done():
		return errors.Join(err, ctx.Err())
	}
	return err
}

func (m *rbConnector) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = m.conn.Shutdown(ctx)
	m.cancel()
	<-m.done
}

// javaTool prepares a command running a class of one Kafka release's
// tools (testcluster.Tool, testcluster.Tool4).
type javaTool func(ctx context.Context, mainClass string, args ...string) (*exec.Cmd, error)

// rbJava is a Java console consumer in the group, whose standard output
// is read line by line.
type rbJava struct {
	n      int
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stderr testcluster.LockedBuffer
	exited chan struct{}
	once   sync.Once
}

func startRBJava(env *rbEnv, tool javaTool, seq int, extra ...string) (rbMember, error) {
	ctx, cancel := context.WithCancel(context.Background())
	args := append([]string{"--bootstrap-server", env.bootstrap, "--topic", env.topic, "--group", env.group,
		"--property", "print.partition=true",
		"--consumer-property", "partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor",
		"--consumer-property", "client.id=" + rbName(seq),
	}, extra...)
	cmd, err := tool(ctx, "org.apache.kafka.tools.consumer.ConsoleConsumer", args...)
	if err != nil {
		cancel()
		return nil, err
	}
	j := &rbJava{n: seq, cmd: cmd, cancel: cancel, exited: make(chan struct{})}
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	cmd.Stderr = &j.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(j.exited)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			// "Partition:N\t<value>"; Kafka 4 also prints notices.
			part, value, ok := strings.Cut(sc.Text(), "\t")
			p, err1 := strconv.ParseInt(strings.TrimPrefix(part, "Partition:"), 10, 32)
			sent, err2 := strconv.ParseInt(value, 10, 64)
			if ok && err1 == nil && err2 == nil {
				env.seen.see(seq, int32(p), sent)
			}
		}
		_ = cmd.Wait()
	}()
	return j, nil
}

func (j *rbJava) seq() int { return j.n }

// leave sends SIGTERM: the console consumer's shutdown hook wakes the
// consumer, which commits and sends LeaveGroup as it closes.
func (j *rbJava) leave(ctx context.Context) error {
	if err := j.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-j.exited:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the JVM did not exit after SIGTERM: %w; stderr:\n%s", ctx.Err(), j.stderr.String())
	}
}

func (j *rbJava) stop() {
	j.once.Do(func() {
		j.cancel()
		<-j.exited
	})
}
