package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// FaultKind names one kind of fault.
type FaultKind string

// The faults the driver can inject. Holds are drawn from the seeded
// schedule; "session" is the members' session timeout (ZooKeeper's, or
// Kafka's session.timeout.ms in Kafka mode).
const (
	// MemberKill kills a member with SIGKILL and restarts it after Hold.
	MemberKill FaultKind = "member-kill"
	// MemberStop freezes a member with SIGSTOP for Hold (longer than the
	// session timeout), then resumes it with SIGCONT.
	MemberStop FaultKind = "member-stop"
	// MemberLeave interrupts a member with SIGINT, waits for its clean
	// exit, and restarts it after Hold.
	MemberLeave FaultKind = "member-leave"

	// MemberZKCutShort cuts one running member off every ZooKeeper server
	// (its proxies blackhole) for Hold, shorter than the session timeout.
	MemberZKCutShort FaultKind = "member-zk-cut-short"
	// MemberZKCutLong cuts one running member off every ZooKeeper server
	// for Hold, longer than the session timeout.
	MemberZKCutLong FaultKind = "member-zk-cut-long"
	// MemberZKCutExpiry cuts one running member off every ZooKeeper server
	// until ZooKeeper expires its session (its registration under
	// /consumers/<group>/ids vanishes), then heals at once: the member
	// reconnects before it has tried every server, the window in which a
	// request queued under the old session could reach a new one. Hold
	// bounds the wait.
	MemberZKCutExpiry FaultKind = "member-zk-cut-expiry"
	// MemberBrokerCutShort cuts one running member off every broker (its
	// broker proxies blackhole) for Hold, shorter than the session
	// timeout; its ZooKeeper connections stay up.
	MemberBrokerCutShort FaultKind = "member-broker-cut-short"
	// MemberBrokerCutLong is MemberBrokerCutShort for longer than the
	// session timeout.
	MemberBrokerCutLong FaultKind = "member-broker-cut-long"

	// ZKPauseShort freezes every ZooKeeper server for about 3 s.
	ZKPauseShort FaultKind = "zk-pause-short"
	// ZKPauseLong freezes every ZooKeeper server for longer than the
	// session timeout.
	ZKPauseLong FaultKind = "zk-pause-long"
	// ZKRestart kills every ZooKeeper server with SIGKILL and restarts
	// them after Hold.
	ZKRestart FaultKind = "zk-restart"
	// ZKLeaderRestart kills the ensemble's leader with SIGKILL and
	// restarts it after Hold.
	ZKLeaderRestart FaultKind = "zk-leader-restart"
	// ZKFollowerRestart kills a follower with SIGKILL and restarts it
	// after Hold.
	ZKFollowerRestart FaultKind = "zk-follower-restart"
	// ZKPauseConnected freezes, for Hold, the ZooKeeper server that the
	// target member is connected to (the one its proxies have a live
	// connection to).
	ZKPauseConnected FaultKind = "zk-pause-connected"
	// ZKQuorumLoss freezes a majority of the servers (two of three) for
	// Hold, longer than the session timeout: no server serves.
	ZKQuorumLoss FaultKind = "zk-quorum-loss"
	// ZKFollowerIsolate cuts a follower (the one the target member is
	// connected to, if it is one) off the other servers for Hold, longer
	// than the session timeout; its clients still reach it. It keeps
	// answering their pings for up to syncLimit x tickTime while the
	// leader expires their sessions.
	ZKFollowerIsolate FaultKind = "zk-follower-isolate"

	// OverlapZKCutLeaderRestart cuts the target member off ZooKeeper for
	// Hold and, while it is cut, kills the ensemble's leader and restarts
	// it.
	OverlapZKCutLeaderRestart FaultKind = "overlap-zk-cut-leader-restart"
	// OverlapStopTwo freezes two members at once (Member and Member2) for
	// Hold, longer than the session timeout.
	OverlapStopTwo FaultKind = "overlap-stop-two"
	// OverlapBrokerPauseRebalance interrupts the target member (it leaves,
	// so the group rebalances) and at the same moment freezes the broker
	// that leads most partitions, for Hold; the member is restarted when
	// the broker is thawed, a second rebalance.
	OverlapBrokerPauseRebalance FaultKind = "overlap-broker-pause-rebalance"

	// BrokerKill kills a broker with SIGKILL and restarts it after Hold.
	BrokerKill FaultKind = "broker-kill"
	// BrokerPause freezes a broker for Hold.
	BrokerPause FaultKind = "broker-pause"
	// CoordinatorPause freezes the broker that coordinates the group (as
	// FindCoordinator names it) for Hold.
	CoordinatorPause FaultKind = "coordinator-pause"
	// CoordinatorKill kills the group's coordinator with SIGKILL and
	// restarts it after Hold.
	CoordinatorKill FaultKind = "coordinator-kill"
	// StaticReplace starts a new process for the target member's slot,
	// with the same group.instance.id, while the old one still runs; after
	// Hold the old one is killed with SIGKILL (even Pick) or interrupted
	// with SIGINT (odd Pick). Kafka mode only.
	StaticReplace FaultKind = "static-replace"

	// LeaderMove moves the leaders of Count partitions to other replicas.
	LeaderMove FaultKind = "leader-move"
	// AddPartitions adds Count partitions to a topic.
	AddPartitions FaultKind = "add-partitions"
	// NewTopic creates a topic of Count partitions that the wildcard
	// members' whitelist matches.
	NewTopic FaultKind = "new-topic"
)

// AllKinds lists every fault kind in report order.
var AllKinds = []FaultKind{
	MemberKill, MemberStop, MemberLeave,
	MemberZKCutShort, MemberZKCutLong, MemberZKCutExpiry,
	MemberBrokerCutShort, MemberBrokerCutLong,
	ZKPauseShort, ZKPauseLong, ZKRestart,
	ZKLeaderRestart, ZKFollowerRestart, ZKPauseConnected, ZKQuorumLoss, ZKFollowerIsolate,
	OverlapZKCutLeaderRestart, OverlapStopTwo, OverlapBrokerPauseRebalance,
	BrokerKill, BrokerPause, CoordinatorPause, CoordinatorKill, StaticReplace,
	LeaderMove, AddPartitions, NewTopic,
}

// weights make member faults the most frequent; faults of the whole
// cluster, which disturb every member at once, are rarer.
var weights = map[FaultKind]int{
	MemberKill: 8, MemberStop: 6, MemberLeave: 6,
	MemberZKCutShort: 5, MemberZKCutLong: 5, MemberZKCutExpiry: 6,
	MemberBrokerCutShort: 5, MemberBrokerCutLong: 4,
	ZKPauseShort: 2, ZKPauseLong: 2, ZKRestart: 2,
	ZKLeaderRestart: 5, ZKFollowerRestart: 4, ZKPauseConnected: 5, ZKQuorumLoss: 3, ZKFollowerIsolate: 4,
	OverlapZKCutLeaderRestart: 4, OverlapStopTwo: 4, OverlapBrokerPauseRebalance: 4,
	BrokerKill: 5, BrokerPause: 5, CoordinatorPause: 6, CoordinatorKill: 6, StaticReplace: 10,
	LeaderMove: 6, AddPartitions: 3, NewTopic: 3,
}

func (k FaultKind) valid() bool { return slices.Contains(AllKinds, k) }

// memberFault reports whether k targets a member (Member, and Member2
// for OverlapStopTwo).
func (k FaultKind) memberFault() bool {
	switch k {
	case MemberKill, MemberStop, MemberLeave,
		MemberZKCutShort, MemberZKCutLong, MemberZKCutExpiry, MemberBrokerCutShort, MemberBrokerCutLong,
		ZKPauseConnected, ZKFollowerIsolate,
		OverlapZKCutLeaderRestart, OverlapStopTwo, OverlapBrokerPauseRebalance, StaticReplace:
		return true
	}
	return false
}

// zooKeeperFault reports whether k acts on ZooKeeper servers.
func (k FaultKind) zooKeeperFault() bool {
	switch k {
	case ZKPauseShort, ZKPauseLong, ZKRestart, ZKLeaderRestart, ZKFollowerRestart,
		ZKPauseConnected, ZKQuorumLoss, ZKFollowerIsolate, OverlapZKCutLeaderRestart:
		return true
	}
	return false
}

// ensembleFault reports whether k needs a ZooKeeper ensemble (a leader,
// followers, a majority short of all).
func (k FaultKind) ensembleFault() bool {
	switch k {
	case ZKLeaderRestart, ZKFollowerRestart, ZKQuorumLoss, ZKFollowerIsolate, OverlapZKCutLeaderRestart:
		return true
	}
	return false
}

// needsZooKeeperMembers reports whether k needs members coordinated
// through ZooKeeper (it cuts or watches their ZooKeeper sessions).
func (k FaultKind) needsZooKeeperMembers() bool {
	switch k {
	case MemberZKCutShort, MemberZKCutLong, MemberZKCutExpiry, ZKPauseConnected, ZKFollowerIsolate, OverlapZKCutLeaderRestart:
		return true
	}
	return false
}

// kafkaModeOnly reports whether k needs Kafka-coordinated members.
func (k FaultKind) kafkaModeOnly() bool { return k == StaticReplace }

// ParseKinds parses a comma-separated list of fault kinds.
func ParseKinds(list []string) ([]FaultKind, error) {
	var out []FaultKind
	for _, s := range list {
		k := FaultKind(s)
		if !k.valid() {
			return nil, fmt.Errorf("chaos: unknown fault kind %q (known: %v)", s, AllKinds)
		}
		out = append(out, k)
	}
	return out, nil
}

// PlannedFault is one entry of the schedule.
type PlannedFault struct {
	// ID numbers the faults from 1 in schedule order.
	ID int `json:"id"`
	// Kind is what happens.
	Kind FaultKind `json:"kind"`
	// At is when the fault is due, from the start of the fault phase. A
	// fault starts no earlier than one second after the previous one ended.
	At time.Duration `json:"at"`
	// Member is the target slot of a member fault.
	Member int `json:"member,omitempty"`
	// Member2 is the second target slot of OverlapStopTwo.
	Member2 int `json:"member2,omitempty"`
	// Broker is the target broker id of a broker fault.
	Broker int `json:"broker,omitempty"`
	// Hold is how long the fault lasts: the pause, or the time the target
	// stays down before it is restarted.
	Hold time.Duration `json:"hold,omitempty"`
	// Count is the number of partitions moved, added or created.
	Count int `json:"count,omitempty"`
	// Pick drives the choices that depend on the state at run time
	// (which topic, which partitions, which replica).
	Pick uint64 `json:"pick"`
}

// Target describes what the fault acts on, for the report.
func (f PlannedFault) Target() string {
	switch {
	case f.Kind == OverlapStopTwo:
		return fmt.Sprintf("members %d and %d", f.Member, f.Member2)
	case f.Kind.memberFault():
		return fmt.Sprintf("member %d", f.Member)
	case f.Kind == BrokerKill || f.Kind == BrokerPause:
		return fmt.Sprintf("broker %d", f.Broker)
	case f.Kind == CoordinatorKill || f.Kind == CoordinatorPause:
		return "coordinator"
	case f.Kind.zooKeeperFault():
		return "zookeeper"
	default:
		return fmt.Sprintf("%d partitions", f.Count)
	}
}

// brokers is the size of the chaos cluster.
const brokers = 3

// NewSchedule derives the fault schedule from cfg.Seed: which faults, in
// which order, when, against which target and for how long. It is a pure
// function of the seed and of cfg's Faults, Duration, Kinds, Topology,
// ZooKeeperServers, Members and SessionTimeout. When there are at least as many faults as kinds, every
// kind occurs at least once.
func NewSchedule(cfg Config) []PlannedFault {
	if cfg.Faults <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed_c4a05))
	kinds := usableKinds(cfg)
	if len(kinds) == 0 {
		return nil
	}
	var seq []FaultKind
	if cfg.Faults >= len(kinds) {
		seq = append(seq, kinds...)
		for len(seq) < cfg.Faults {
			seq = append(seq, weightedPick(rng, kinds))
		}
	} else {
		pool := slices.Clone(kinds)
		for len(seq) < cfg.Faults {
			k := weightedPick(rng, pool)
			seq = append(seq, k)
			pool = slices.DeleteFunc(pool, func(x FaultKind) bool { return x == k })
		}
	}
	rng.Shuffle(len(seq), func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })

	interval := cfg.Duration / time.Duration(cfg.Faults)
	out := make([]PlannedFault, len(seq))
	for i, k := range seq {
		f := PlannedFault{
			ID:   i + 1,
			Kind: k,
			At:   interval/4 + time.Duration(i)*interval + between(rng, 0, interval/2),
			Pick: rng.Uint64(),
		}
		session := cfg.SessionTimeout
		long := session*3/2 + between(rng, 0, time.Second)
		switch k {
		case MemberKill, MemberLeave:
			f.Member = rng.IntN(cfg.Members)
			f.Hold = between(rng, 500*time.Millisecond, 3*time.Second)
		case MemberStop, MemberZKCutLong, MemberBrokerCutLong, ZKFollowerIsolate:
			f.Member = rng.IntN(cfg.Members)
			f.Hold = long
		case MemberZKCutShort, MemberBrokerCutShort:
			f.Member = rng.IntN(cfg.Members)
			f.Hold = between(rng, session/4, session/2)
		case MemberZKCutExpiry:
			f.Member = rng.IntN(cfg.Members)
			f.Hold = 4 * session // at most; healed once the session expired
		case ZKPauseConnected:
			f.Member = rng.IntN(cfg.Members)
			f.Hold = between(rng, session/3, session*3/2)
		case OverlapZKCutLeaderRestart:
			f.Member = rng.IntN(cfg.Members)
			f.Hold = between(rng, session/2, session*3/2)
		case OverlapStopTwo:
			f.Member = rng.IntN(cfg.Members)
			f.Member2 = (f.Member + 1 + rng.IntN(max(1, cfg.Members-1))) % cfg.Members
			f.Hold = long
		case OverlapBrokerPauseRebalance:
			f.Member = rng.IntN(cfg.Members)
			f.Hold = between(rng, 2*time.Second, 6*time.Second)
		case StaticReplace:
			f.Member = rng.IntN(cfg.Members)
			f.Hold = between(rng, 500*time.Millisecond, 4*time.Second)
		case ZKPauseShort:
			f.Hold = between(rng, 2500*time.Millisecond, 3500*time.Millisecond)
		case ZKPauseLong, ZKQuorumLoss:
			base := max(10*time.Second, session*5/3)
			f.Hold = between(rng, base-500*time.Millisecond, base+500*time.Millisecond)
		case ZKRestart, ZKLeaderRestart, ZKFollowerRestart:
			f.Hold = between(rng, time.Second, 3*time.Second)
		case BrokerKill, BrokerPause:
			f.Broker = rng.IntN(brokers)
			f.Hold = between(rng, 2*time.Second, 6*time.Second)
		case CoordinatorKill:
			f.Hold = between(rng, 2*time.Second, 6*time.Second)
		case CoordinatorPause:
			f.Hold = between(rng, 2*time.Second, session*3/2)
		case LeaderMove:
			f.Count = 1 + rng.IntN(4)
		case AddPartitions:
			f.Count = 1 + rng.IntN(2)
		case NewTopic:
			f.Count = 2 + rng.IntN(3)
		}
		out[i] = f
	}
	return out
}

// usableKinds are the kinds of cfg that make sense for its topology and
// group: a new topic needs a wildcard member to consume it, ensemble
// faults an ensemble, ZooKeeper cuts members coordinated through
// ZooKeeper, replacements static members, two frozen members two members.
func usableKinds(cfg Config) []FaultKind {
	kinds := cfg.Kinds
	if len(kinds) == 0 {
		kinds = cfg.Topology.kinds()
	}
	hasWildcard := false
	for slot := range cfg.Members {
		hasWildcard = hasWildcard || cfg.Topology.wildcard(slot)
	}
	kafkaMode := cfg.Topology.kafkaMode()
	var out []FaultKind
	for _, k := range AllKinds { // a stable order, whatever the input order
		switch {
		case !slices.Contains(kinds, k),
			k == NewTopic && !hasWildcard,
			k.ensembleFault() && cfg.ZooKeeperServers < 3,
			k.needsZooKeeperMembers() && kafkaMode,
			k.kafkaModeOnly() && !kafkaMode,
			k == OverlapStopTwo && cfg.Members < 2:
			continue
		}
		out = append(out, k)
	}
	return out
}

func weightedPick(rng *rand.Rand, kinds []FaultKind) FaultKind {
	total := 0
	for _, k := range kinds {
		total += weights[k]
	}
	n := rng.IntN(total)
	for _, k := range kinds {
		if n < weights[k] {
			return k
		}
		n -= weights[k]
	}
	return kinds[len(kinds)-1]
}

// between returns a duration in [lo, hi).
func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}
