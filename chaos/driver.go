package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
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
	CommandLine string `json:"command_line"`
	// Topology and its settings: ZooKeeper servers, how members are
	// coordinated ("zookeeper" or "kafka"), where they commit
	// ("zookeeper" or "kafka"), their assignor, and the ZooKeeper chroot.
	Topology         Topology `json:"topology"`
	ZooKeeperServers int      `json:"zookeeper_servers"`
	// KRaft reports a cluster of Kafka 4 nodes in KRaft mode (no
	// ZooKeeper); GroupProtocol is the members' group.protocol when set.
	KRaft          bool   `json:"kraft,omitempty"`
	GroupProtocol  string `json:"group_protocol,omitempty"`
	Coordination   string `json:"coordination"`
	OffsetsStorage string `json:"offsets_storage"`
	Assignment     string `json:"assignment"`
	StaticMembers  bool   `json:"static_members,omitempty"`
	Chroot         string `json:"chroot"`

	Seed           int64          `json:"seed"`
	Messages       int            `json:"messages"`
	MessageSize    int            `json:"message_size"`
	Members        int            `json:"members"`
	Streams        int            `json:"streams"`
	FaultsPlanned  int            `json:"faults_planned"`
	Duration       time.Duration  `json:"duration"`
	SessionTimeout time.Duration  `json:"session_timeout"`
	CommitInterval time.Duration  `json:"commit_interval"`
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
	} else if err := requireEmptyDir(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "members"), 0o755); err != nil {
		return nil, err
	}
	log.Info("chaos run", "topology", cfg.Topology, "dir", dir, "seed", cfg.Seed, "messages", cfg.Messages, "members", cfg.Members, "faults", cfg.Faults, "duration", cfg.Duration)
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
	coordination := "zookeeper"
	if cfg.Topology.kafkaMode() {
		coordination = "kafka"
	}
	zkServers, assignment := cfg.ZooKeeperServers, cfg.Topology.assignment()
	if cfg.Topology.kraft() {
		zkServers = 0
	}
	if cfg.Topology.groupProtocol() == connector.GroupProtocolConsumer.String() {
		assignment = "the broker's (group.remote.assignor)"
	}
	d.info = RunInfo{
		CommandLine: cfg.CommandLine, Topology: cfg.Topology, ZooKeeperServers: zkServers, KRaft: cfg.Topology.kraft(),
		GroupProtocol: cfg.Topology.groupProtocol(),
		Coordination:  coordination, OffsetsStorage: cfg.Topology.offsetsStorage(), Assignment: assignment,
		StaticMembers: cfg.Topology.static(), Chroot: testcluster.DefaultChroot,
		Seed: cfg.Seed, Messages: cfg.Messages, MessageSize: cfg.MessageSize,
		Members: cfg.Members, Streams: cfg.Streams, FaultsPlanned: cfg.Faults, Duration: cfg.Duration,
		SessionTimeout: cfg.SessionTimeout, CommitInterval: cfg.CommitInterval,
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

	opts := clusterOptions(cfg)
	opts.Dir = filepath.Join(d.dir, "cluster")
	opts.Logf = func(format string, args ...any) { d.log.Info(fmt.Sprintf(format, args...)) }
	cluster, err := testcluster.Start(ctx, opts)
	if err != nil {
		return fmt.Errorf("chaos: start cluster: %w", err)
	}
	clusterStopped := false
	defer func() {
		if !clusterStopped {
			err = errors.Join(err, stopCluster(cluster, nil))
		}
	}()
	// A fresh cluster on a busy machine may refuse admin requests for a
	// few seconds.
	if err := retry(ctx, time.Minute, func(ctx context.Context) error {
		return cluster.CreateTopic(ctx, main, int32(cfg.Partitions), brokers)
	}); err != nil {
		return err
	}
	nets, err := newMemberNets(cluster, cfg.Members, !cfg.Topology.kafkaMode())
	if err != nil {
		return err
	}
	defer nets.close()
	var observer *zksession.Session
	if !cfg.Topology.kafkaMode() {
		dctx, cancel := context.WithTimeout(ctx, time.Minute)
		observer, err = zksession.Dial(dctx, zksession.SessionConfig{Connect: cluster.ZKConnect(), SessionTimeout: 30 * time.Second})
		cancel()
		if err != nil {
			return fmt.Errorf("chaos: the driver's ZooKeeper session: %w", err)
		}
		defer observer.Close()
	}
	prod, err := newProducer(cluster.BrokerAddrs(), cluster.ClientConfig(), filepath.Join(d.dir, ackedFile), cfg.MessageSize, d.log)
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
	members := newMemberSet(d.dir, cfg.MemberCommand, cfg.Members, d.memberSpec(cluster, nets), d.log)
	defer members.killRemaining()
	in := &injector{cfg: cfg, cluster: cluster, members: members, tracker: trk, producer: prod, net: nets,
		observer: observer, group: d.info.Group, log: d.log,
		prefix: topicPrefix, topics: []topicInfo{{Name: main, Partitions: cfg.Partitions}}}
	for slot := range cfg.Members {
		if err := in.startMember(slot); err != nil {
			return err
		}
	}
	check := d.checkOwners(ctx, in)
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
	check = d.checkOwners(ctx, in)
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
	if err := d.saveInfo(); err != nil {
		return err
	}
	clusterStopped = true
	return d.observeCommits(ctx, cluster, observer)
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
func (d *driver) memberSpec(cluster *testcluster.Cluster, nets *memberNets) func(slot, inc int) MemberSpec {
	return func(slot, inc int) MemberSpec {
		s := MemberSpec{
			Slot: slot, Inc: inc, Group: d.info.Group, Streams: d.cfg.Streams,
			Coordination: d.info.Coordination, OffsetsStorage: d.info.OffsetsStorage, Assignment: d.cfg.Topology.assignment(),
			SessionTimeout: d.cfg.SessionTimeout, CommitInterval: d.cfg.CommitInterval,
			BrokerRoutes: nets.brokerRoutes(slot),
		}
		if d.cfg.Topology.kafkaMode() {
			s.Bootstrap = strings.Join(cluster.BrokerAddrs(), ",")
			s.GroupProtocol = d.info.GroupProtocol
		} else {
			s.ZKConnect = nets.zkConnect(slot)
		}
		if d.cfg.Topology.static() {
			s.InstanceID = fmt.Sprintf("chaos-%d", slot)
		}
		if d.cfg.Topology.wildcard(slot) {
			s.Whitelist = d.info.Whitelist
		} else {
			s.Topic = d.info.MainTopic
		}
		return s
	}
}

// checkOwners waits for the group to agree with the assignor (ZooKeeper
// mode) or for the running members' assignments to cover every partition
// exactly once (Kafka mode).
func (d *driver) checkOwners(ctx context.Context, in *injector) OwnersCheck {
	sctx, cancel := context.WithTimeout(ctx, d.cfg.SettleTimeout+30*time.Second)
	defer cancel()
	live := func() map[string]string {
		in.tracker.poll()
		out := map[string]string{}
		for _, p := range in.members.running() {
			out[p.Key()] = in.tracker.consumerID(p.Key())
		}
		return out
	}
	start := time.Now()
	for {
		var check OwnersCheck
		if in.observer != nil {
			check = readOwners(sctx, in.observer, d.info.Group, d.info.Assignment, live())
		} else {
			running := in.members.running()
			check = kafkaOwners(in.tracker, live(), in.topicList(), d.cfg.Topology, running)
			if d.cfg.Topology.groupProtocol() == connector.GroupProtocolConsumer.String() {
				d.checkBrokerOwners(sctx, in, running, &check)
			}
		}
		check.WaitedMs = time.Since(start).Milliseconds()
		if check.Converged || time.Since(start) > d.cfg.SettleTimeout || sctx.Err() != nil {
			d.log.Info("group owners checked", "converged", check.Converged, "waited", time.Since(start).Round(time.Millisecond))
			return check
		}
		sleep(sctx, 500*time.Millisecond)
	}
}

// checkBrokerOwners adds to check what the group's coordinator says of a
// consumer-protocol group that differs from the running members
// (brokerOwnerMismatches).
func (d *driver) checkBrokerOwners(ctx context.Context, in *injector, running []*process, check *OwnersCheck) {
	g, err := describeConsumerGroup(ctx, in.cluster.BrokerAddrs(), in.cluster.ClientConfig(), d.info.Group)
	if err != nil {
		check.Mismatches = append(check.Mismatches, "cannot describe the group: "+err.Error())
		check.Converged = false
		return
	}
	var slots []slotAssignment
	for _, p := range running {
		parts, ok := in.tracker.assignment(p.Key())
		slots = append(slots, slotAssignment{Slot: p.Slot, Key: p.Key(), Parts: parts, OK: ok})
	}
	if ms := brokerOwnerMismatches(g, slots); len(ms) > 0 {
		check.Mismatches = append(check.Mismatches, ms...)
		check.Converged = false
	}
}

// observeCommits reads the final committed offsets from the store, then
// every commit the store applied during the run (ZooKeeper: the servers'
// transaction logs, read once the cluster is stopped; Kafka:
// __consumer_offsets, read before), stops the cluster and saves both.
func (d *driver) observeCommits(ctx context.Context, cluster *testcluster.Cluster, observer *zksession.Session) error {
	octx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var final map[string]int64
	finalErr := retry(octx, time.Minute, func(ctx context.Context) error {
		var err error
		final, err = d.finalOffsets(ctx, cluster, observer)
		return err
	})
	var commits []CommitRecord
	var obs CommitObservation
	var err error
	if d.info.OffsetsStorage == storeKafka {
		commits, obs, err = readKafkaCommits(octx, cluster.BrokerAddrs(), d.info.Group, cluster.ClientConfig())
		err = errors.Join(err, stopCluster(cluster, nil))
	} else {
		err = stopCluster(cluster, func() error {
			dirs, gerr := filepath.Glob(filepath.Join(cluster.Dir(), "zookeeper*", "data", "version-2"))
			if gerr != nil {
				return gerr
			}
			var rerr error
			commits, obs, rerr = readZKCommits(dirs, d.info.Chroot, d.info.Group)
			return rerr
		})
	}
	if err != nil {
		return fmt.Errorf("chaos: observe the committed offsets: %w", err)
	}
	obs.Final = final
	if finalErr != nil {
		obs.Problems = append(obs.Problems, "final committed offsets unreadable: "+finalErr.Error())
	} else {
		obs.checkFinal(commits)
	}
	d.log.Info("committed offsets observed", "store", obs.Store, "entries", obs.Entries, "commits", obs.Commits, "problems", len(obs.Problems))
	return saveCommits(d.dir, commits, obs)
}

// finalOffsets reads the group's committed offsets at the end of the run,
// with a Kafka client of its own.
func (d *driver) finalOffsets(ctx context.Context, cluster *testcluster.Cluster, observer *zksession.Session) (map[string]int64, error) {
	out := map[string]int64{}
	if d.info.OffsetsStorage == storeZooKeeper {
		topics, err := observer.Children(ctx, zkutil.OffsetsPath(d.info.Group))
		if err != nil {
			return nil, err
		}
		for _, t := range topics {
			parts, err := observer.Children(ctx, zkutil.OffsetsTopicPath(d.info.Group, t))
			if err != nil {
				return nil, err
			}
			for _, p := range parts {
				path := zkutil.OffsetsTopicPath(d.info.Group, t) + "/" + p
				data, _, err := observer.Get(ctx, path)
				if err != nil {
					return nil, err
				}
				off, err := zkutil.DecodeOffset(path, data)
				if err != nil {
					return nil, err
				}
				out[t+"-"+p] = off
			}
		}
		return out, nil
	}
	ca, err := sarama.NewClusterAdmin(cluster.BrokerAddrs(), cluster.ClientConfig())
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	resp, err := ca.ListConsumerGroupOffsets(d.info.Group, nil)
	if err != nil {
		return nil, err
	}
	if resp.Err != sarama.ErrNoError {
		return nil, resp.Err
	}
	for t, parts := range resp.Blocks {
		for p, b := range parts {
			if b.Err != sarama.ErrNoError {
				return nil, fmt.Errorf("%s-%d: %w", t, p, b.Err)
			}
			if b.Offset >= 0 {
				out[topicPartition{t, p}.String()] = b.Offset
			}
		}
	}
	return out, nil
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

// stopCluster stops every JVM, runs read (if not nil) and removes the
// cluster's data, keeping its logs.
func stopCluster(c *testcluster.Cluster, read func() error) error {
	err := c.Stop()
	if read != nil {
		err = errors.Join(err, read())
	}
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

// requireEmptyDir refuses a run directory that holds anything: a kept
// run's logs and cluster data would be read as this run's (its acked and
// delivered messages, its topics), and its verdict would be wrong.
func requireEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("chaos: run directory: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("chaos: run directory %s is not empty (an earlier run's logs and cluster data would be mixed into this one's): remove it or name another", dir)
	}
	return nil
}

// clusterOptions is the private cluster of a run of cfg: three brokers
// with min.insync.replicas 2 (replication factor 3 comes with the topics
// and the internal topics), and __consumer_offsets in one segment for the
// whole run: the log cleaner never compacts an active segment, so every
// commit stays readable (readKafkaCommits checks it). A KRaft topology
// gets three Kafka 4 nodes, each a broker and a controller, whose consumer
// group session timeout (KIP-848's group.consumer.*) is the members'; the
// others a ZooKeeper ensemble of cfg.ZooKeeperServers and Kafka 3.9.
func clusterOptions(cfg Config) testcluster.Options {
	props := map[string]string{
		"min.insync.replicas":         "2",
		"replica.lag.time.max.ms":     "10000",
		"offsets.topic.segment.bytes": "1073741824",
	}
	if !cfg.Topology.kraft() {
		return testcluster.Options{Brokers: brokers, ZooKeeperServers: cfg.ZooKeeperServers, BrokerProperties: props, FullJIT: cfg.FullJIT}
	}
	// With the consumer protocol the session timeout and the heartbeat
	// interval are the broker's: the broker's default and minimum are the
	// run's session timeout, and members heartbeat six times per session
	// (at least every 100 ms), well inside their lease.
	session := cfg.SessionTimeout.Milliseconds()
	heartbeat := max(100, session/6)
	props["group.consumer.min.session.timeout.ms"] = strconv.FormatInt(session, 10)
	props["group.consumer.session.timeout.ms"] = strconv.FormatInt(session, 10)
	props["group.consumer.max.session.timeout.ms"] = strconv.FormatInt(max(60_000, session), 10)
	props["group.consumer.min.heartbeat.interval.ms"] = strconv.FormatInt(heartbeat, 10)
	props["group.consumer.heartbeat.interval.ms"] = strconv.FormatInt(heartbeat, 10)
	return testcluster.Options{KRaft: true, Brokers: brokers, Controllers: brokers, BrokerProperties: props, FullJIT: cfg.FullJIT}
}
