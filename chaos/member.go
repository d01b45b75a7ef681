package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"go.uber.org/goleak"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/stream"
)

// MemberEnv is the environment variable through which the driver hands a
// member process its MemberSpec, as JSON.
const MemberEnv = "ZKCONSUMER_CHAOS_MEMBER"

// Exit codes of a member process.
const (
	exitClean = 0
	exitError = 1
	exitPanic = 2
	exitLeak  = 3
)

// MemberSpec is the task of one member process.
type MemberSpec struct {
	Slot int `json:"slot"`
	Inc  int `json:"inc"`
	// ZKConnect is zookeeper.connect (the slot's proxies); empty in Kafka
	// mode, where Bootstrap is bootstrap.servers.
	ZKConnect string `json:"zk,omitempty"`
	Bootstrap string `json:"bootstrap,omitempty"`
	Group     string `json:"group"`
	// Coordination is zkconsumer.group.coordination, OffsetsStorage
	// offsets.storage and Assignment partition.assignment.strategy;
	// InstanceID, if set, is group.instance.id (Kafka mode).
	Coordination   string `json:"coordination"`
	OffsetsStorage string `json:"offsets_storage"`
	Assignment     string `json:"assignment"`
	InstanceID     string `json:"instance_id,omitempty"`
	// GroupProtocol, if set, is group.protocol (Kafka mode): "consumer"
	// for KIP-848's protocol, whose session timeout and heartbeat interval
	// are the broker's (SessionTimeout is then what the member assumes of
	// the broker's, for its lease).
	GroupProtocol string `json:"group_protocol,omitempty"`
	// BrokerRoutes maps each broker's address to the slot's proxy of it;
	// the member dials every broker connection through it.
	BrokerRoutes map[string]string `json:"broker_routes,omitempty"`
	// Topic is the topic of a static subscription; Whitelist, if set,
	// makes the member a wildcard member instead.
	Topic          string        `json:"topic,omitempty"`
	Whitelist      string        `json:"whitelist,omitempty"`
	Streams        int           `json:"streams"`
	SessionTimeout time.Duration `json:"session_timeout"`
	CommitInterval time.Duration `json:"commit_interval"`
	LogPath        string        `json:"log"`
}

// IsMemberProcess reports whether this process was started by the driver
// as a member (MemberEnv is set).
func IsMemberProcess() bool { return os.Getenv(MemberEnv) != "" }

// MemberMain runs the member described by MemberEnv until SIGINT or
// SIGTERM, then shuts the connector down, checks for leaked goroutines and
// returns the process exit code: 0 after a clean exit, 1 on errors, 2 after
// a panic, 3 when goroutines were left behind. Its own diagnostics go to
// stderr.
func MemberMain() int {
	var spec MemberSpec
	if err := json.Unmarshal([]byte(os.Getenv(MemberEnv)), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "chaos member: bad %s: %v\n", MemberEnv, err)
		return exitError
	}
	w, err := createLog(spec.LogPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos member: %v\n", err)
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Whatever runs now (the log flusher, the signal loop) is not the
	// consumer's; the leak check at exit ignores it.
	baseline := goleak.IgnoreCurrent()
	m := &member{spec: spec, log: w}
	code := m.run(ctx, baseline)
	if err := w.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "chaos member: log: %v\n", err)
		if code == exitClean {
			code = exitError
		}
	}
	return code
}

// member is one incarnation of a verifying consumer.
type member struct {
	spec MemberSpec
	log  *logWriter
	id   string

	panicked  chan struct{} // closed after the first recovered panic
	panicOnce sync.Once
}

func (m *member) now() int64 { return time.Now().UnixNano() }

func (m *member) errorf(format string, args ...any) {
	m.log.Write(Record{Kind: RecError, TS: m.now(), Err: fmt.Sprintf(format, args...)})
}

// reportError logs an error of the connector, and, if it is a commit that
// failed, the offsets the commit tried to write: the store may still have
// applied them (see connector.CommitError), which the verifier must know
// to explain the re-deliveries that follow.
func (m *member) reportError(prefix string, err error) {
	ts := m.now()
	m.log.Write(Record{Kind: RecError, TS: ts, Err: prefix + err.Error()})
	var ce *connector.CommitError
	if errors.As(err, &ce) && len(ce.Offsets) > 0 {
		offsets := map[string]map[int32]int64{}
		for tp, off := range ce.Offsets {
			if offsets[tp.Topic] == nil {
				offsets[tp.Topic] = map[int32]int64{}
			}
			offsets[tp.Topic][tp.Partition] = off
		}
		m.log.Write(Record{Kind: RecCommitFailed, TS: ts, Offsets: offsets})
	}
}

// recoverPanic records a panic of the calling goroutine.
func (m *member) recoverPanic(where string) {
	if r := recover(); r != nil {
		m.log.Write(Record{Kind: RecPanic, TS: m.now(), Err: fmt.Sprintf("%s: %v", where, r), Stack: string(debug.Stack())})
		_ = m.log.Flush()
		fmt.Fprintf(os.Stderr, "chaos member: recovered panic in %s: %v\n", where, r)
		m.panicOnce.Do(func() { close(m.panicked) })
	}
}

// config is the member's connector configuration; the spec spells its
// options as properties files do.
func (m *member) config() (connector.Config, error) {
	cfg := connector.DefaultConfig()
	cfg.GroupID = m.spec.Group
	cfg.AutoCommitEnable = true
	cfg.AutoCommitInterval = m.spec.CommitInterval
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	var strategy connector.AssignmentStrategy
	if err := strategy.UnmarshalText([]byte(m.spec.Assignment)); err != nil {
		return cfg, err
	}
	cfg.PartitionAssignmentStrategy = []connector.AssignmentStrategy{strategy}
	if m.spec.Coordination == connector.CoordinationKafka.String() {
		cfg.GroupCoordination = connector.CoordinationKafka
		cfg.BootstrapServers = m.spec.Bootstrap
		cfg.SessionTimeout = m.spec.SessionTimeout
		cfg.HeartbeatInterval = m.spec.SessionTimeout / 3
		cfg.GroupInstanceID = m.spec.InstanceID
		if m.spec.GroupProtocol != "" {
			if err := cfg.GroupProtocol.UnmarshalText([]byte(m.spec.GroupProtocol)); err != nil {
				return cfg, err
			}
		}
		cfg.MetadataMaxAge = 2 * time.Second // new topics of the whitelist
	} else {
		cfg.ZooKeeperConnect = m.spec.ZKConnect
		cfg.ZooKeeperSessionTimeout = m.spec.SessionTimeout
		if err := cfg.OffsetsStorage.UnmarshalText([]byte(m.spec.OffsetsStorage)); err != nil {
			return cfg, err
		}
		if cfg.OffsetsStorage == connector.OffsetsStorageKafka {
			cfg.DualCommitEnabled = connector.DualCommitOff
		}
	}
	cfg.ClientID = memberClientID(m.spec.Slot)
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return cfg, nil
}

func (m *member) run(ctx context.Context, baseline goleak.Option) int {
	m.panicked = make(chan struct{})
	cfg, err := m.config()
	if err != nil {
		m.errorf("config: %v", err)
		m.exit(false, err, nil)
		return exitError
	}
	c, err := connector.New(ctx, cfg, connector.WithRebalanceListener(listener{m}),
		connector.WithDialer(routingDialer{routes: m.spec.BrokerRoutes}))
	if err != nil {
		m.errorf("connector.New: %v", err)
		m.exit(false, err, nil)
		return exitError
	}
	m.id = c.ConsumerID()
	m.log.Write(Record{Kind: RecStart, TS: m.now(), Slot: m.spec.Slot, Inc: m.spec.Inc,
		ConsumerID: m.id, PID: os.Getpid(), Wildcard: m.spec.Whitelist != ""})
	_ = m.log.Flush()

	var streams []*stream.KafkaStream
	if m.spec.Whitelist != "" {
		streams, err = c.CreateMessageStreamsByFilter(ctx, connector.Whitelist(m.spec.Whitelist), m.spec.Streams)
	} else {
		var byTopic map[string][]*stream.KafkaStream
		byTopic, err = c.CreateMessageStreams(ctx, map[string]int{m.spec.Topic: m.spec.Streams})
		streams = byTopic[m.spec.Topic]
	}
	joinErr := err
	if err != nil && ctx.Err() == nil {
		m.errorf("create message streams: %v", err)
	}

	var wg sync.WaitGroup
	wg.Go(func() {
		defer m.recoverPanic("errors reader")
		for err := range c.Errors() { // closed by Shutdown
			m.reportError("", err)
		}
	})
	for i, s := range streams {
		wg.Go(func() { m.read(i, s) })
	}
	if joinErr == nil {
		select {
		case <-ctx.Done():
		case <-m.panicked:
		}
	}

	sctx, cancel := context.WithTimeout(context.Background(), 2*m.spec.SessionTimeout+10*time.Second)
	shutdownErr := c.Shutdown(sctx)
	cancel()
	if shutdownErr != nil {
		m.reportError("shutdown: ", shutdownErr)
	}
	wg.Wait()
	m.log.StopFlusher()

	leakErr := goleak.Find(append([]goleak.Option{baseline}, testcluster.IgnoredGoroutines()...)...)
	select {
	case <-m.panicked:
		m.exit(false, errors.New("panicked"), leakErr)
		return exitPanic
	default:
	}
	clean := shutdownErr == nil && (joinErr == nil || ctx.Err() != nil)
	m.exit(clean, errors.Join(joinErr, shutdownErr), leakErr)
	switch {
	case leakErr != nil:
		return exitLeak
	case !clean:
		return exitError
	}
	return exitClean
}

// exit writes the exit record: whether the member ends cleanly, and the
// goroutines that outlived Shutdown.
func (m *member) exit(clean bool, err, leakErr error) {
	r := Record{Kind: RecExit, TS: m.now(), Clean: clean, Goroutines: runtime.NumGoroutine()}
	if err != nil {
		r.Err = err.Error()
		r.Replaced = errors.Is(err, sarama.ErrFencedInstancedId)
	}
	if leakErr != nil {
		r.Leaked = leakErr.Error()
	}
	m.log.Write(r)
}

// read logs every message of s until the stream is shut down. The log is
// flushed before each call to Next, which is when the previous message
// counts as consumed and may be committed.
func (m *member) read(thread int, s *stream.KafkaStream) {
	defer m.recoverPanic(fmt.Sprintf("stream %d", thread))
	ctx := context.Background() // Shutdown ends the stream
	for {
		if err := m.log.Flush(); err != nil {
			m.fatal(fmt.Errorf("write log: %w", err))
			return
		}
		msg, err := s.Next(ctx)
		ts := m.now()
		if errors.Is(err, stream.ErrShutdown) {
			return
		}
		if err != nil {
			m.errorf("stream %d: %v", thread, err)
			continue
		}
		seq, perr := testcluster.ParseSeq(msg.Value)
		if perr != nil {
			m.errorf("stream %d: %s-%d@%d: %v", thread, msg.Topic, msg.Partition, msg.Offset, perr)
			seq = -1
		}
		m.log.Delivery(ts, msg.Topic, msg.Partition, msg.Offset, int64(seq))
	}
}

// fatal stops the member: a member that cannot write its log cannot vouch
// for what it consumed.
func (m *member) fatal(err error) {
	fmt.Fprintf(os.Stderr, "chaos member: %v\n", err)
	_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
}

// routingDialer dials every broker through the member's proxy of it
// (MemberSpec.BrokerRoutes); other addresses (the ZooKeeper proxies) are
// dialled as they are.
type routingDialer struct {
	routes map[string]string
	net.Dialer
}

func (d routingDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if to, ok := d.routes[address]; ok {
		address = to
	}
	return d.Dialer.DialContext(ctx, network, address)
}

// listener records ownership changes as the connector reports them.
type listener struct{ m *member }

func (l listener) BeforeReleasingPartitions(_ context.Context, _ *connector.ConsumerConnector, released map[string][]int32, lost bool) {
	defer l.m.recoverPanic("BeforeReleasingPartitions")
	l.m.log.Write(Record{Kind: RecRelease, TS: l.m.now(), Parts: released, Lost: lost})
	_ = l.m.log.Flush()
}

func (l listener) BeforeStartingFetchers(_ context.Context, _ *connector.ConsumerConnector, gained map[string][]int32) {
	defer l.m.recoverPanic("BeforeStartingFetchers")
	l.m.log.Write(Record{Kind: RecAssign, TS: l.m.now(), Parts: gained})
	_ = l.m.log.Flush()
}
