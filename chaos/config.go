package chaos

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Config describes one chaos run.
type Config struct {
	// Topology is the shape of the run (coordination, offset storage,
	// assignor, fault kinds); TopologyEnsemble if empty.
	Topology Topology
	// ZooKeeperServers is the size of the ZooKeeper ensemble: 3, or 1 for
	// a single server (without the ensemble faults). A KRaft topology
	// (TopologyKafkaConsumer) runs no ZooKeeper and ignores it.
	ZooKeeperServers int
	// Seed selects the fault schedule; the same seed and the same
	// schedule-shaping fields give the same schedule.
	Seed int64
	// Messages is how many messages the producer sends over the run.
	Messages int
	// MessageSize is the size of each message value in bytes.
	MessageSize int
	// Members is the number of member processes (slots) of the group.
	Members int
	// Streams is the number of streams each member creates.
	Streams int
	// Partitions is the partition count of the main topic.
	Partitions int
	// Faults is the number of faults to inject.
	Faults int
	// Duration is the length of the fault phase; production is paced over
	// it and the faults are spread across it.
	Duration time.Duration
	// Kinds restricts the schedule to these fault kinds; all if empty.
	Kinds []FaultKind
	// SessionTimeout is the members' zookeeper.session.timeout.ms (in
	// Kafka mode: session.timeout.ms; with the consumer group protocol
	// also the broker's group.consumer.session.timeout.ms).
	SessionTimeout time.Duration
	// CommitInterval is the members' auto.commit.interval.ms.
	CommitInterval time.Duration
	// DrainTimeout bounds the wait for every acknowledged message to be
	// delivered after production ends.
	DrainTimeout time.Duration
	// SettleTimeout bounds the wait for the group to settle: at the start,
	// and before the final owners are compared with the assignor.
	SettleTimeout time.Duration
	// ExitTimeout bounds a member's clean exit after SIGINT.
	ExitTimeout time.Duration
	// MemberCommand is the command line that starts a member process; the
	// member reads its task from the environment (see MemberMain).
	MemberCommand []string
	// Dir is the run directory (logs, report); a fresh temporary directory
	// if empty.
	Dir string
	// Keep keeps the run directory even when the run passes. A failed run
	// always keeps it.
	Keep bool
	// CommandLine is printed in the report.
	CommandLine string
	// Logger receives the driver's progress; discarded if nil.
	Logger *slog.Logger
	// FullJIT runs the cluster's JVMs with both of HotSpot's compilers, as
	// production does (testcluster.Options.FullJIT): the full runs of
	// make chaos do; the short run of make test saves the CPU.
	FullJIT bool
}

// DefaultConfig is the full run of one topology in make chaos: a million
// messages, five members and 105 faults over about fourteen minutes.
func DefaultConfig(t Topology) Config {
	return Config{
		Topology:         t,
		ZooKeeperServers: 3,
		Seed:             1,
		Messages:         1_000_000,
		MessageSize:      100,
		Members:          5,
		Streams:          2,
		Partitions:       12,
		Faults:           105,
		Duration:         14 * time.Minute,
		SessionTimeout:   6 * time.Second,
		CommitInterval:   time.Second,
		DrainTimeout:     3 * time.Minute,
		SettleTimeout:    90 * time.Second,
		ExitTimeout:      30 * time.Second,
		FullJIT:          true,
	}
}

// ShortConfig is the seeded run of the Go test, on the ensemble topology:
// nine faults, among them a member cut off ZooKeeper until its session
// expires and healed at once, a member cut off the brokers, and a restart
// of the ensemble's leader, in about a minute. Its deadlines are sized for
// a loaded two-core machine.
func ShortConfig() Config { return ShortConfigOf(TopologyEnsemble) }

// ShortConfigOf is ShortConfig on topology t. The topologies with offsets
// in ZooKeeper (ensemble, sticky) keep its nine fault kinds; the others
// draw from their own kinds.
func ShortConfigOf(t Topology) Config {
	c := DefaultConfig(t)
	c.Seed = 7
	c.Messages = 50_000
	c.Faults = 9
	c.Duration = 60 * time.Second
	c.DrainTimeout = 2 * time.Minute
	c.SettleTimeout = 90 * time.Second
	c.FullJIT = false
	c.Kinds = []FaultKind{
		MemberKill, MemberStop, MemberLeave,
		MemberZKCutExpiry, MemberBrokerCutShort,
		ZKLeaderRestart, BrokerPause, LeaderMove, NewTopic,
	}
	if t.offsetsStorage() != storeZooKeeper {
		c.Kinds = nil
	}
	return c
}

// Validate reports a configuration that cannot run.
func (c Config) Validate() error {
	var errs []error
	if !c.Topology.valid() {
		errs = append(errs, fmt.Errorf("chaos: unknown topology %q (known: %v)", c.Topology, Topologies))
	}
	if c.ZooKeeperServers != 1 && c.ZooKeeperServers != 3 {
		errs = append(errs, fmt.Errorf("chaos: %d ZooKeeper servers, need 1 or 3", c.ZooKeeperServers))
	}
	if c.Messages < 1 {
		errs = append(errs, fmt.Errorf("chaos: messages = %d, need at least 1", c.Messages))
	}
	if c.MessageSize < 16 {
		errs = append(errs, fmt.Errorf("chaos: message size %d, need at least 16", c.MessageSize))
	}
	if c.Members < 1 {
		errs = append(errs, fmt.Errorf("chaos: members = %d, need at least 1", c.Members))
	}
	if c.Streams < 1 {
		errs = append(errs, fmt.Errorf("chaos: streams = %d, need at least 1", c.Streams))
	}
	if c.Partitions < 1 {
		errs = append(errs, fmt.Errorf("chaos: partitions = %d, need at least 1", c.Partitions))
	}
	if c.Faults < 0 {
		errs = append(errs, fmt.Errorf("chaos: faults = %d, need 0 or more", c.Faults))
	}
	if c.Duration < time.Second {
		errs = append(errs, fmt.Errorf("chaos: duration %v, need at least 1s", c.Duration))
	}
	if c.SessionTimeout < time.Second {
		errs = append(errs, fmt.Errorf("chaos: session timeout %v, need at least 1s", c.SessionTimeout))
	}
	if c.CommitInterval <= 0 {
		errs = append(errs, fmt.Errorf("chaos: commit interval %v, need more than 0", c.CommitInterval))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"drain timeout", c.DrainTimeout}, {"settle timeout", c.SettleTimeout}, {"exit timeout", c.ExitTimeout}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("chaos: %s %v, need more than 0", d.name, d.v))
		}
	}
	for _, k := range c.Kinds {
		if !k.valid() {
			errs = append(errs, fmt.Errorf("chaos: unknown fault kind %q (known: %v)", k, AllKinds))
		}
	}
	if len(c.MemberCommand) == 0 {
		errs = append(errs, errors.New("chaos: no member command"))
	}
	return errors.Join(errs...)
}
