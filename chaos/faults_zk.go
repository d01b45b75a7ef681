package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// zooKeeperFault carries out a fault of the ZooKeeper servers: the whole
// ensemble paused or restarted, its leader or a follower restarted, the
// server a member is connected to paused, a majority paused, a follower
// isolated from the others. It returns once ZooKeeper serves again (a
// quorum is up), bounded by three minutes.
func (in *injector) zooKeeperFault(ctx context.Context, f PlannedFault, rec *FaultRecord) error {
	c := in.cluster
	all := func() {
		if in.storeIsZooKeeper() {
			rec.StoreCut = []string{"*"}
		}
	}
	// connected returns the members connected to server i, and marks them
	// as cut off their store (when it is ZooKeeper).
	connected := func(i int) []string {
		keys := in.keysOf(in.net.connectedTo(i))
		if in.storeIsZooKeeper() {
			rec.StoreCut = keys
		}
		return keys
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var err error
	switch f.Kind {
	case ZKPauseShort, ZKPauseLong:
		all()
		rec.Start = time.Now().UnixNano()
		err = in.pause(ctx, f.Hold, c.PauseZooKeeper, c.ResumeZooKeeper)
	case ZKRestart:
		all()
		rec.Start = time.Now().UnixNano()
		err = in.restart(ctx, f.Hold, c.KillZooKeeper, c.RestartZooKeeper)
	case ZKLeaderRestart:
		all() // every session sees the election
		leader, lerr := c.ZooKeeperLeader(lctx)
		if lerr != nil {
			return fmt.Errorf("find the leader: %w", lerr)
		}
		rec.Detail = fmt.Sprintf("leader: server %d", leader)
		rec.Start = time.Now().UnixNano()
		err = in.restartZKServer(ctx, leader, f.Hold)
	case ZKFollowerRestart:
		follower, ferr := in.follower(lctx, f.Pick, -1)
		if ferr != nil {
			return ferr
		}
		rec.Detail = fmt.Sprintf("follower: server %d (members connected: %v)", follower, connected(follower))
		rec.Start = time.Now().UnixNano()
		err = in.restartZKServer(ctx, follower, f.Hold)
	case ZKPauseConnected:
		p := in.members.get(f.Member)
		if p == nil || p.ended() {
			return fmt.Errorf("member slot %d is not running", f.Member)
		}
		rec.Inc = p.Inc
		srv, ok := in.net.connectedServer(f.Member, f.Pick)
		if !ok {
			return fmt.Errorf("member %s has no live connection to ZooKeeper", p.Key())
		}
		rec.Detail = fmt.Sprintf("server %d (members connected: %v)", srv, connected(srv))
		rec.Start = time.Now().UnixNano()
		err = in.pause(ctx, f.Hold,
			func() error { return c.PauseZooKeeperServer(srv) },
			func() error { return c.ResumeZooKeeperServer(srv) })
	case ZKQuorumLoss:
		all()
		n := c.ZooKeeperServers()
		a := int(f.Pick % uint64(n))
		b := (a + 1 + int(f.Pick/uint64(n))%(n-1)) % n
		rec.Detail = fmt.Sprintf("servers %d and %d paused", a, b)
		rec.Start = time.Now().UnixNano()
		err = in.pause(ctx, f.Hold,
			func() error { return errors.Join(c.PauseZooKeeperServer(a), c.PauseZooKeeperServer(b)) },
			func() error { return errors.Join(c.ResumeZooKeeperServer(a), c.ResumeZooKeeperServer(b)) })
	case ZKFollowerIsolate:
		p := in.members.get(f.Member)
		if p == nil || p.ended() {
			return fmt.Errorf("member slot %d is not running", f.Member)
		}
		rec.Inc = p.Inc
		srv, ok := in.net.connectedServer(f.Member, f.Pick)
		leader, lerr := c.ZooKeeperLeader(lctx)
		if lerr != nil {
			return fmt.Errorf("find the leader: %w", lerr)
		}
		note := "the member's server"
		if !ok || srv == leader {
			note = "the member's server leads; another follower"
			if srv, err = in.follower(lctx, f.Pick, leader); err != nil {
				return err
			}
		}
		rec.Detail = fmt.Sprintf("follower %d isolated (%s; members connected: %v)", srv, note, connected(srv))
		rec.Start = time.Now().UnixNano()
		if err = c.IsolateZooKeeperServer(srv); err == nil {
			sleep(ctx, f.Hold)
			err = c.HealZooKeeperServer(srv)
		}
	default:
		return fmt.Errorf("not a ZooKeeper fault: %s", f.Kind)
	}
	rec.End = time.Now().UnixNano()
	qctx, qcancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
	defer qcancel()
	if qerr := c.WaitZooKeeperQuorum(qctx); qerr != nil {
		err = errors.Join(err, fmt.Errorf("ZooKeeper did not serve again: %w", qerr))
	}
	return err
}

// restartZKServer kills ZooKeeper server i and starts it again after hold.
func (in *injector) restartZKServer(ctx context.Context, i int, hold time.Duration) error {
	return in.restart(ctx, hold,
		func() error { return in.cluster.KillZooKeeperServer(i) },
		func(ctx context.Context) error { return in.cluster.RestartZooKeeperServer(ctx, i) })
}

// follower picks a follower of the ensemble (not the leader, nor except).
func (in *injector) follower(ctx context.Context, pick uint64, except int) (int, error) {
	leader, err := in.cluster.ZooKeeperLeader(ctx)
	if err != nil {
		return 0, fmt.Errorf("find the leader: %w", err)
	}
	var followers []int
	for i := range in.cluster.ZooKeeperServers() {
		if i != leader && i != except {
			followers = append(followers, i)
		}
	}
	slices.Sort(followers)
	if len(followers) == 0 {
		return 0, errors.New("no follower")
	}
	return followers[pick%uint64(len(followers))], nil
}
