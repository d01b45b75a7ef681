package chaos

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/IBM/sarama"
)

// brokerFault kills or pauses a broker: f.Broker, or the group's
// coordinator for CoordinatorKill and CoordinatorPause. When the members
// commit to Kafka and the broker coordinates the group, every member is
// cut off its offset store meanwhile.
func (in *injector) brokerFault(ctx context.Context, f PlannedFault, rec *FaultRecord) error {
	id := f.Broker
	coord, cerr := in.coordinator(ctx)
	switch f.Kind {
	case CoordinatorKill, CoordinatorPause:
		if cerr != nil {
			return fmt.Errorf("find the coordinator: %w", cerr)
		}
		id = coord
		rec.Broker = id
		rec.Detail = fmt.Sprintf("broker %d coordinates the group", id)
	default:
		if cerr == nil && coord == id {
			rec.Detail = "the broker coordinates the group"
		}
	}
	if !in.storeIsZooKeeper() && (cerr != nil || coord == id) {
		rec.StoreCut = []string{"*"}
	}
	rec.Start = time.Now().UnixNano()
	switch f.Kind {
	case BrokerKill, CoordinatorKill:
		return in.restart(ctx, f.Hold,
			func() error { return in.cluster.KillBroker(id) },
			func(ctx context.Context) error {
				attempts, err := in.restartBroker(ctx, id)
				if attempts > 1 {
					rec.Detail = joinDetail(rec.Detail, fmt.Sprintf("restarted at attempt %d", attempts))
				}
				return err
			})
	default:
		return in.pause(ctx, f.Hold,
			func() error { return in.cluster.PauseBroker(id) },
			func() error { return in.cluster.ResumeBroker(id) })
	}
}

// coordinator asks the cluster which broker coordinates the group
// (FindCoordinator), through a client of its own: the brokers' faults
// break the connections of a client kept across them.
func (in *injector) coordinator(ctx context.Context) (int, error) {
	type answer struct {
		id  int
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		client, err := sarama.NewClient(in.cluster.BrokerAddrs(), in.cluster.ClientConfig())
		if err != nil {
			ch <- answer{err: err}
			return
		}
		defer client.Close()
		b, err := client.Coordinator(in.group)
		if err != nil {
			ch <- answer{err: err}
			return
		}
		ch <- answer{id: int(b.ID())}
	}()
	select {
	case a := <-ch:
		return a.id, a.err
	case <-time.After(time.Minute):
		return 0, errors.New("FindCoordinator did not answer within a minute")
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// busiestBroker returns the broker that leads most partitions of the
// main topic.
func (in *injector) busiestBroker(ctx context.Context) (int, error) {
	topics := in.topicList()
	count := map[int]int{}
	var errs []error
	for p := range topics[0].Partitions {
		st, err := in.cluster.ReadPartitionState(ctx, topics[0].Name, int32(p))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		count[st.Leader]++
	}
	best := -1
	for id := range brokers {
		if best < 0 || count[id] > count[best] {
			best = id
		}
	}
	if len(count) == 0 {
		return 0, fmt.Errorf("no partition leader known: %w", errors.Join(errs...))
	}
	return best, nil
}

// brokerPauseDuringRebalance interrupts a member (it leaves: the group
// rebalances) and at the same moment freezes the broker leading most
// partitions of the main topic; the broker is thawed after f.Hold and the
// member restarted once it has exited (the group rebalances again).
func (in *injector) brokerPauseDuringRebalance(ctx context.Context, f PlannedFault, rec *FaultRecord) error {
	id, err := in.busiestBroker(ctx)
	if err != nil {
		return err
	}
	rec.Broker = id
	coord, cerr := in.coordinator(ctx)
	if !in.storeIsZooKeeper() && (cerr != nil || coord == id) {
		rec.StoreCut = []string{"*"}
	}
	rec.Detail = fmt.Sprintf("broker %d paused", id)
	if cerr == nil && coord == id {
		rec.Detail += " (it coordinates the group)"
	}
	p := in.members.get(f.Member)
	rec.Start = time.Now().UnixNano()
	var errs []error
	if err := in.cluster.PauseBroker(id); err != nil {
		return err
	}
	if _, err := in.members.signal(p, syscall.SIGINT, "leave", f.ID); err != nil {
		errs = append(errs, err)
	} else {
		rec.Inc = p.Inc
	}
	sleep(ctx, f.Hold)
	errs = append(errs, in.cluster.ResumeBroker(id))
	if p != nil && rec.Inc != 0 {
		select {
		case <-p.done:
		case <-time.After(in.cfg.ExitTimeout):
			errs = append(errs, fmt.Errorf("member %s did not exit within %v of SIGINT", p.Key(), in.cfg.ExitTimeout))
			in.members.killRemainingOf(p)
		}
	}
	rec.End = time.Now().UnixNano()
	errs = append(errs, in.startMember(f.Member))
	return errors.Join(errs...)
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
