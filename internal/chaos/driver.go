package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/testcluster"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// Names inside the run directory.
const (
	runFile          = "run.json"
	faultsFile       = "faults.jsonl"
	incarnationsFile = "incarnations.jsonl"
	ackedFile        = "acked.jsonl"
	ownersFile       = "owners.json"
	reportFile       = "report.txt"
)

// topicPrefix names the run's topics; the whitelist matches them all.
const topicPrefix = "chaos"

// RunInfo is what the driver knows about a run besides the member logs; it
// is saved as run.json.
type RunInfo struct {
	CommandLine    string         `json:"command_line"`
	Seed           int64          `json:"seed"`
	Messages       int            `json:"messages"`
	MessageSize    int            `json:"message_size"`
	Members        int            `json:"members"`
	Streams        int            `json:"streams"`
	FaultsPlanned  int            `json:"faults_planned"`
	Duration       time.Duration  `json:"duration"`
	SessionTimeout time.Duration  `json:"session_timeout"`
	CommitInterval time.Duration  `json:"commit_interval"`
	CommitSlack    time.Duration  `json:"commit_slack"`
	Group          string         `json:"group"`
	MainTopic      string         `json:"main_topic"`
	Whitelist      string         `json:"whitelist"`
	Machine        Machine        `json:"machine"`
	Schedule       []PlannedFault `json:"schedule"`
	Topics         []topicInfo    `json:"topics"`

	Start        int64 `json:"start"`
	FaultsStart  int64 `json:"faults_start"`
	FaultsEnd    int64 `json:"faults_end"`
	ProduceEnd   int64 `json:"produce_end"`
	DrainEnd     int64 `json:"drain_end"`
	End          int64 `json:"end"`
	Sent         int   `json:"sent"`
	ProduceFails int   `json:"produce_failures"`
	// ProduceErrors are the first produce errors.
	ProduceErrors []string `json:"produce_errors,omitempty"`
	// Undelivered counts acknowledged messages still undelivered when the
	// drain gave up (0 when it completed).
	Undelivered int `json:"undelivered"`
	// Settled reports whether the group settled before the faults began.
	Settled bool `json:"settled"`
}

// Machine describes where the run ran.
type Machine struct {
	CPUs      int    `json:"cpus"`
	MemoryMiB int    `json:"memory_mib"`
	Go        string `json:"go"`
	OS        string `json:"os"`
}

func thisMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if fields := strings.Fields(sc.Text()); len(fields) >= 2 && fields[0] == "MemTotal:" {
				kb, _ := strconv.Atoi(fields[1])
				m.MemoryMiB = kb / 1024
			}
		}
		f.Close()
	}
	return m
}

// Run carries out a chaos run as described by the package documentation,
// then verifies it. It returns the verdict; an error means the run itself
// could not be carried out (no cluster, say). The run directory is removed
// when the run passes, unless cfg.Keep.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := cfg.Dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", fmt.Sprintf("zkconsumer-chaos-%d-", cfg.Seed)); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "members"), 0o755); err != nil {
		return nil, err
	}
	log.Info("chaos run", "dir", dir, "seed", cfg.Seed, "messages", cfg.Messages, "members", cfg.Members, "faults", cfg.Faults, "duration", cfg.Duration)
	d := &driver{cfg: cfg, log: log, dir: dir}
	if err := d.run(ctx); err != nil {
		return nil, fmt.Errorf("%w (logs in %s)", err, dir)
	}
	res, err := Verify(dir)
	if err != nil {
		return nil, fmt.Errorf("%w (logs in %s)", err, dir)
	}
	var b strings.Builder
	res.Report(&b)
	if err := os.WriteFile(filepath.Join(dir, reportFile), []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	res.Dir = dir
	if res.Passed() && !cfg.Keep {
		res.Removed = os.RemoveAll(dir) == nil
	}
	return res, nil
}

// driver holds the state of one run.
type driver struct {
	cfg  Config
	log  *slog.Logger
	dir  string
	info RunInfo

	faultsMu sync.Mutex
	faults   *os.File
}

func (d *driver) run(ctx context.Context) (err error) {
	cfg := d.cfg
	main := topicPrefix + ".main"
	d.info = RunInfo{
		CommandLine: cfg.CommandLine, Seed: cfg.Seed, Messages: cfg.Messages, MessageSize: cfg.MessageSize,
		Members: cfg.Members, Streams: cfg.Streams, FaultsPlanned: cfg.Faults, Duration: cfg.Duration,
		SessionTimeout: cfg.SessionTimeout, CommitInterval: cfg.CommitInterval, CommitSlack: cfg.CommitSlack,
		Group: "chaos-group", MainTopic: main, Whitelist: regexp.QuoteMeta(topicPrefix+".") + ".*",
		Machine: thisMachine(), Schedule: NewSchedule(cfg), Start: time.Now().UnixNano(),
	}
	if err := d.saveInfo(); err != nil {
		return err
	}
	if d.faults, err = os.Create(filepath.Join(d.dir, faultsFile)); err != nil {
		return err
	}
	defer d.faults.Close()

	cluster, err := testcluster.Start(ctx, testcluster.Options{
		Brokers: brokers,
		Dir:     filepath.Join(d.dir, "cluster"),
		BrokerProperties: map[string]string{
			"min.insync.replicas":     "2",
			"replica.lag.time.max.ms": "10000",
		},
		Logf: func(format string, args ...any) { d.log.Info(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		return fmt.Errorf("chaos: start cluster: %w", err)
	}
	defer func() { err = errors.Join(err, stopCluster(cluster)) }()
	if err := cluster.CreateTopic(ctx, main, int32(cfg.Partitions), brokers); err != nil {
		return err
	}
	prod, err := newProducer(cluster.BrokerAddrs(), filepath.Join(d.dir, ackedFile), cfg.MessageSize, d.log)
	if err != nil {
		return err
	}
	prodClosed := false
	defer func() {
		if !prodClosed {
			err = errors.Join(err, prod.close())
		}
	}()
	if err := prod.setTopic(main, cfg.Partitions); err != nil {
		return err
	}

	trk := newTracker(d.log)
	members := newMemberSet(d.dir, cfg.MemberCommand, cfg.Members, d.memberSpec(cluster.ZKConnect()), d.log)
	defer members.killRemaining()
	in := &injector{cfg: cfg, cluster: cluster, members: members, tracker: trk, producer: prod, log: d.log,
		prefix: topicPrefix, topics: []topicInfo{{Name: main, Partitions: cfg.Partitions}}}
	for slot := range cfg.Members {
		if err := in.startMember(slot); err != nil {
			return err
		}
	}
	check := d.checkOwners(ctx, cluster, members, trk)
	d.info.Settled = check.Converged
	if !check.Converged {
		d.log.Warn("the group did not settle before the faults", "mismatches", check.Mismatches)
	}

	// Background work of the fault phase: following the logs, restarting
	// members that exit on their own, producing, reporting progress.
	bg, stopBG := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopBG(); wg.Wait() }()
	wg.Go(func() { d.follow(bg, trk) })
	if stop, err := d.watchOffsets(bg, cluster, in.topicList); err != nil {
		d.log.Warn("not watching committed offsets", "err", err)
	} else {
		defer stop()
	}
	wg.Go(func() { d.supervise(bg, in) })
	start := time.Now()
	end := &phaseEnd{t: start.Add(cfg.Duration)}
	produced := make(chan struct{})
	wg.Go(func() {
		defer close(produced)
		prod.run(bg, cfg.Messages, end.get)
	})
	var faultsDone atomic.Int64
	wg.Go(func() { d.progress(bg, prod, trk, &faultsDone) })

	d.info.FaultsStart = start.UnixNano()
	if err := d.injectFaults(ctx, in, start, end, &faultsDone); err != nil {
		return err
	}
	d.info.FaultsEnd = time.Now().UnixNano()
	d.log.Info("faults done; finishing production")
	select {
	case <-produced:
	case <-ctx.Done():
		return ctx.Err()
	}
	prodClosed = true
	if err := prod.close(); err != nil {
		return err
	}
	d.info.ProduceEnd = time.Now().UnixNano()
	d.info.Sent, _, d.info.ProduceFails = prod.counts()
	d.info.ProduceErrors = prod.firstErrs
	d.info.Topics = in.topicList()

	for slot := range cfg.Members {
		if err := in.startMember(slot); err != nil {
			return err
		}
	}
	d.drain(ctx, trk, prod.ackedOffsets())
	check = d.checkOwners(ctx, cluster, members, trk)
	if err := writeJSON(filepath.Join(d.dir, ownersFile), check); err != nil {
		return err
	}
	stopBG()
	wg.Wait()
	d.log.Info("interrupting every member")
	members.stopAll(cfg.ExitTimeout)
	d.info.End = time.Now().UnixNano()
	if err := writeJSONLines(filepath.Join(d.dir, incarnationsFile), members.incarnations()); err != nil {
		return err
	}
	return d.saveInfo()
}

// injectFaults runs the schedule, one fault at a time: each at its planned
// time, but no earlier than a second after the previous one ended.
func (d *driver) injectFaults(ctx context.Context, in *injector, start time.Time, end *phaseEnd, done *atomic.Int64) error {
	next := start
	for _, f := range d.info.Schedule {
		due := start.Add(f.At)
		if due.Before(next) {
			due = next
		}
		end.extend(due.Add(f.Hold + 2*time.Second))
		sleep(ctx, time.Until(due))
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := d.logFault(in.run(ctx, f)); err != nil {
			return err
		}
		done.Add(1)
		next = time.Now().Add(time.Second)
	}
	return nil
}

// phaseEnd is when production should be over: the end of the planned fault
// phase, or a little after the end of the latest fault started, whichever
// is later (faults that take longer than planned make the phase run late).
type phaseEnd struct {
	mu sync.Mutex
	t  time.Time
}

func (e *phaseEnd) get() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.t
}

func (e *phaseEnd) extend(t time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if t.After(e.t) {
		e.t = t
	}
}

// memberSpec returns the task of incarnation inc of slot.
func (d *driver) memberSpec(zkConnect string) func(slot, inc int) MemberSpec {
	return func(slot, inc int) MemberSpec {
		s := MemberSpec{
			Slot: slot, Inc: inc, ZKConnect: zkConnect, Group: d.info.Group, Streams: d.cfg.Streams,
			SessionTimeout: d.cfg.SessionTimeout, CommitInterval: d.cfg.CommitInterval,
		}
		if wildcard(slot) {
			s.Whitelist = d.info.Whitelist
		} else {
			s.Topic = d.info.MainTopic
		}
		return s
	}
}

// watchOffsets records the committed offsets as they change until ctx
// ends or stop is called; stop waits for the watcher and releases its
// session.
func (d *driver) watchOffsets(ctx context.Context, cluster *testcluster.Cluster, topics func() []topicInfo) (stop func(), err error) {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	zk, err := zkutil.Dial(dctx, zkutil.SessionConfig{Connect: cluster.ZKConnect(), SessionTimeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(d.dir, offsetsFile))
	if err != nil {
		zk.Close()
		return nil, err
	}
	w := &offsetWatcher{zk: zk, group: d.info.Group, topics: topics, out: f, seen: map[topicPartition]int32{}}
	wctx, cancelWatch := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.run(wctx)
	}()
	return func() {
		cancelWatch()
		<-done
		f.Close()
		zk.Close()
	}, nil
}

// checkOwners waits for the group to agree with the assignor.
func (d *driver) checkOwners(ctx context.Context, cluster *testcluster.Cluster, members *memberSet, trk *tracker) OwnersCheck {
	sctx, cancel := context.WithTimeout(ctx, d.cfg.SettleTimeout+30*time.Second)
	defer cancel()
	zk, err := zkutil.Dial(sctx, zkutil.SessionConfig{Connect: cluster.ZKConnect(), SessionTimeout: 30 * time.Second})
	if err != nil {
		return OwnersCheck{Err: err.Error(), Mismatches: []string{"cannot connect to ZooKeeper: " + err.Error()}}
	}
	defer zk.Close()
	live := func() map[string]string {
		trk.poll()
		out := map[string]string{}
		for _, p := range members.running() {
			out[p.Key()] = trk.consumerID(p.Key())
		}
		return out
	}
	start := time.Now()
	for {
		check := readOwners(sctx, zk, d.info.Group, live())
		check.WaitedMs = time.Since(start).Milliseconds()
		if check.Converged || time.Since(start) > d.cfg.SettleTimeout || sctx.Err() != nil {
			d.log.Info("group owners checked", "converged", check.Converged, "waited", time.Since(start).Round(time.Millisecond))
			return check
		}
		sleep(sctx, 500*time.Millisecond)
	}
}

// drain waits until every acknowledged message has been delivered.
func (d *driver) drain(ctx context.Context, trk *tracker, acked map[topicPartition][]int64) {
	start := time.Now()
	d.log.Info("waiting for every acknowledged message to be delivered", "timeout", d.cfg.DrainTimeout)
	for {
		trk.poll()
		n, sample := trk.undelivered(acked)
		d.info.Undelivered = n
		if n == 0 {
			d.log.Info("every acknowledged message delivered", "took", time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Since(start) > d.cfg.DrainTimeout || ctx.Err() != nil {
			d.log.Warn("drain gave up", "undelivered", n, "sample", sample)
			break
		}
		sleep(ctx, 500*time.Millisecond)
	}
	d.info.DrainEnd = time.Now().UnixNano()
}

// follow polls the member logs until ctx ends.
func (d *driver) follow(ctx context.Context, trk *tracker) {
	for ctx.Err() == nil {
		trk.poll()
		sleep(ctx, time.Second)
	}
}

// supervise restarts members that exited without being asked to.
func (d *driver) supervise(ctx context.Context, in *injector) {
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-in.members.unexpected:
			sleep(ctx, time.Second)
			if ctx.Err() != nil {
				return
			}
			d.log.Warn("restarting member that exited on its own", "member", p.Key())
			if err := in.startMember(p.Slot); err != nil {
				d.log.Error("restart member", "slot", p.Slot, "err", err)
			}
		}
	}
}

// progress logs a line every 30 seconds.
func (d *driver) progress(ctx context.Context, prod *producer, trk *tracker, faults *atomic.Int64) {
	t := time.NewTicker(30 * time.Second)
	defer t.Stop()
	start := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			sent, acked, failed := prod.counts()
			deliveries, distinct := trk.counts()
			d.log.Info("progress", "elapsed", time.Since(start).Round(time.Second),
				"faults", fmt.Sprintf("%d/%d", faults.Load(), len(d.info.Schedule)),
				"sent", sent, "acked", acked, "failed", failed, "deliveries", deliveries, "distinct", distinct)
		}
	}
}

func (d *driver) logFault(rec FaultRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	d.faultsMu.Lock()
	defer d.faultsMu.Unlock()
	_, err = d.faults.Write(append(data, '\n'))
	return err
}

func (d *driver) saveInfo() error { return writeJSON(filepath.Join(d.dir, runFile), d.info) }

// stopCluster stops every JVM and removes the cluster's data, keeping its
// logs.
func stopCluster(c *testcluster.Cluster) error {
	err := c.Stop()
	dirs, _ := filepath.Glob(filepath.Join(c.Dir(), "*", "data"))
	for _, dir := range dirs {
		err = errors.Join(err, os.RemoveAll(dir))
	}
	return err
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func writeJSONLines[T any](path string, items []T) error {
	var b []byte
	for _, it := range items {
		data, err := json.Marshal(it)
		if err != nil {
			return err
		}
		b = append(append(b, data...), '\n')
	}
	return os.WriteFile(path, b, 0o644)
}
