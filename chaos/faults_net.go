package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// memberNets are the network paths of the member slots, each through
// proxies the driver owns: one proxy per ZooKeeper server (the slot's
// zookeeper.connect lists them) and one per broker (the member's dialer,
// connector.WithDialer, maps each broker address to the slot's proxy). A
// slot keeps its proxies across incarnations.
type memberNets struct {
	zk      []*testcluster.ProxySet // by slot; empty in Kafka mode
	brokers []*testcluster.ProxySet // by slot, one proxy per broker id
	addrs   []string                // the brokers' real addresses, by id
}

// newMemberNets starts the proxies of slots member slots; zk says whether
// the members use ZooKeeper.
func newMemberNets(c *testcluster.Cluster, slots int, zk bool) (_ *memberNets, err error) {
	n := &memberNets{addrs: c.BrokerAddrs()}
	defer func() {
		if err != nil {
			_ = n.close()
		}
	}()
	for range slots {
		if zk {
			ps, err := c.NewZooKeeperProxies()
			if err != nil {
				return nil, fmt.Errorf("chaos: ZooKeeper proxies: %w", err)
			}
			n.zk = append(n.zk, ps)
		}
		ps, err := testcluster.NewProxySet(n.addrs)
		if err != nil {
			return nil, fmt.Errorf("chaos: broker proxies: %w", err)
		}
		n.brokers = append(n.brokers, ps)
	}
	return n, nil
}

func (n *memberNets) close() error {
	var errs []error
	for _, ps := range append(slices.Clone(n.zk), n.brokers...) {
		errs = append(errs, ps.Close())
	}
	return errors.Join(errs...)
}

// zkConnect is slot's zookeeper.connect: its proxies and the chroot.
func (n *memberNets) zkConnect(slot int) string {
	if slot >= len(n.zk) {
		return ""
	}
	return n.zk[slot].Connect()
}

// brokerRoutes maps each broker's address to slot's proxy of it.
func (n *memberNets) brokerRoutes(slot int) map[string]string {
	out := map[string]string{}
	for i, addr := range n.brokers[slot].Addrs() {
		out[n.addrs[i]] = addr
	}
	return out
}

// connectedServer returns the ZooKeeper server (by index) that slot's
// member is connected to: the one whose proxy relays a connection now.
// With more than one (a connection being replaced), pick chooses.
func (n *memberNets) connectedServer(slot int, pick uint64) (int, bool) {
	if slot >= len(n.zk) {
		return 0, false
	}
	live := n.zk[slot].Connected()
	if len(live) == 0 {
		return 0, false
	}
	return live[pick%uint64(len(live))], true
}

// connectedTo returns the slots whose members are connected to ZooKeeper
// server i.
func (n *memberNets) connectedTo(i int) []int {
	var out []int
	for slot, ps := range n.zk {
		if slices.Contains(ps.Connected(), i) {
			out = append(out, slot)
		}
	}
	return out
}

// keysOf names the current incarnations of slots.
func (in *injector) keysOf(slots []int) []string {
	var out []string
	for _, slot := range slots {
		if p := in.members.get(slot); p != nil && !p.ended() {
			out = append(out, p.Key())
		}
	}
	return out
}

// memberCut blackholes a running member's path to every ZooKeeper server
// or to every broker, for f.Hold or (MemberZKCutExpiry) until ZooKeeper
// expired its session, then heals it.
func (in *injector) memberCut(ctx context.Context, f PlannedFault, rec *FaultRecord) error {
	p := in.members.get(f.Member)
	if p == nil || p.ended() {
		return fmt.Errorf("member slot %d is not running", f.Member)
	}
	rec.Inc = p.Inc
	zkCut := f.Kind == MemberZKCutShort || f.Kind == MemberZKCutLong || f.Kind == MemberZKCutExpiry
	var ps *testcluster.ProxySet
	switch {
	case zkCut && f.Member < len(in.net.zk):
		ps = in.net.zk[f.Member]
		if in.storeIsZooKeeper() {
			rec.StoreCut = []string{p.Key()}
		}
	case zkCut:
		return errors.New("the members do not use ZooKeeper")
	default:
		ps = in.net.brokers[f.Member]
		if !in.storeIsZooKeeper() {
			rec.StoreCut = []string{p.Key()}
		}
	}
	var idPath string
	if f.Kind == MemberZKCutExpiry {
		id := in.tracker.consumerID(p.Key())
		if id == "" {
			return fmt.Errorf("member %s has not registered yet", p.Key())
		}
		idPath = zkutil.ConsumerIDPath(in.group, id)
		if ok, err := in.registered(ctx, idPath); err != nil || !ok {
			return fmt.Errorf("member %s: registration %s not found before the cut (%v)", p.Key(), idPath, err)
		}
	}
	rec.Start = time.Now().UnixNano()
	ps.SetMode(testcluster.Blackhole)
	var err error
	if f.Kind == MemberZKCutExpiry {
		var gone time.Duration
		gone, err = in.waitUnregistered(ctx, idPath, f.Hold)
		if err == nil {
			rec.Detail = fmt.Sprintf("session expired %.1f s into the cut; healed at once", gone.Seconds())
		}
	} else {
		sleep(ctx, f.Hold)
	}
	ps.SetMode(testcluster.Forward)
	rec.End = time.Now().UnixNano()
	return err
}

// registered reports whether the registration at path exists, asking the
// driver's own session.
func (in *injector) registered(ctx context.Context, path string) (bool, error) {
	if in.observer == nil {
		return false, errors.New("no ZooKeeper session of the driver")
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ok, _, err := in.observer.Exists(rctx, path)
	return ok, err
}

// waitUnregistered polls the registration at path every 20 ms until it is
// gone (ZooKeeper expired the member's session) and returns how long that
// took; an error if it is still there after limit.
func (in *injector) waitUnregistered(ctx context.Context, path string, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	for time.Since(start) < limit && ctx.Err() == nil {
		ok, err := in.registered(ctx, path)
		if err == nil && !ok {
			return time.Since(start), nil
		}
		sleep(ctx, 20*time.Millisecond)
	}
	return 0, fmt.Errorf("registration %s still there after %v of the cut", path, limit)
}

// cutDuringLeaderRestart cuts a member off ZooKeeper for f.Hold and, a
// third into the cut, kills the ensemble's leader; the leader is started
// again after about a second, and the cut healed at the end of f.Hold
// (or once the leader serves again, if that takes longer).
func (in *injector) cutDuringLeaderRestart(ctx context.Context, f PlannedFault, rec *FaultRecord) error {
	p := in.members.get(f.Member)
	if p == nil || p.ended() {
		return fmt.Errorf("member slot %d is not running", f.Member)
	}
	if f.Member >= len(in.net.zk) {
		return errors.New("the members do not use ZooKeeper")
	}
	rec.Inc = p.Inc
	if in.storeIsZooKeeper() {
		rec.StoreCut = []string{"*"}
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	leader, err := in.cluster.ZooKeeperLeader(lctx)
	cancel()
	if err != nil {
		return fmt.Errorf("find the leader: %w", err)
	}
	ps := in.net.zk[f.Member]
	start := time.Now()
	rec.Start = start.UnixNano()
	ps.SetMode(testcluster.Blackhole)
	defer func() {
		ps.SetMode(testcluster.Forward)
		rec.End = time.Now().UnixNano()
	}()
	sleep(ctx, f.Hold/3)
	killed := time.Since(start)
	if err := in.cluster.KillZooKeeperServer(leader); err != nil {
		return err
	}
	sleep(ctx, time.Second)
	rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	err = in.cluster.RestartZooKeeperServer(rctx, leader)
	cancel()
	serving := time.Since(start)
	sleep(ctx, f.Hold-serving)
	rec.Detail = fmt.Sprintf("leader %d killed %.1f s into the cut, serving again at %.1f s", leader, killed.Seconds(), serving.Seconds())
	return err
}
