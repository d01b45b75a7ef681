package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
)

// committer commits, as auto.commit.enable and auto.commit.interval.ms
// ask, the offsets of what has been written out to standard output. It
// stands in for the connector's automatic commits, which are turned off:
// those would commit what the streams handed out, including messages
// still in the output buffer. Like Kafka's, its commits come every
// interval, before partitions are released in a rebalance, and at exit.
type committer struct {
	c        *connector.ConsumerConnector // set once New returns, before streams exist
	out      *output
	enabled  bool
	interval time.Duration
	timeout  time.Duration // bounds one periodic commit
	stderr   io.Writer

	mu       sync.Mutex
	owned    map[connector.TopicPartition]bool // what the listener was told this member owns
	released map[connector.TopicPartition]bool // by the listener's last call, if a release

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

var _ connector.RebalanceListener = (*committer)(nil)

func newCommitter(out *output, cfg connector.Config, stderr io.Writer) *committer {
	return &committer{
		out:      out,
		enabled:  cfg.AutoCommitEnable,
		interval: cfg.AutoCommitInterval,
		timeout:  cfg.ZooKeeperSessionTimeout,
		stderr:   stderr,
		owned:    map[connector.TopicPartition]bool{},
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// start begins the periodic commits.
func (cm *committer) start() {
	if !cm.enabled {
		close(cm.done)
		return
	}
	go func() {
		defer close(cm.done)
		ticker := time.NewTicker(cm.interval)
		defer ticker.Stop()
		for {
			select {
			case <-cm.stop:
				return
			case <-ticker.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), cm.timeout)
			cm.report(cm.commitOwned(ctx))
			cancel()
		}
	}()
}

// close stops the periodic commits and waits for one in progress.
func (cm *committer) close() {
	cm.once.Do(func() {
		select {
		case <-cm.done: // never started, or start found commits disabled
		default:
			close(cm.stop)
		}
	})
	<-cm.done
}

// final commits what was written out, at exit, when auto-commit is on.
func (cm *committer) final(ctx context.Context) {
	cm.close()
	if cm.enabled {
		cm.report(cm.commitOwned(ctx))
	}
}

func (cm *committer) report(err error) {
	if err != nil {
		fmt.Fprintln(cm.stderr, "console-consumer: commit:", err)
	}
}

// commitOwned commits the written-out offsets of the partitions the
// current generation owns.
func (cm *committer) commitOwned(ctx context.Context) error {
	cm.mu.Lock()
	owned := make(map[connector.TopicPartition]bool, len(cm.owned))
	for tp := range cm.owned {
		owned[tp] = true
	}
	cm.mu.Unlock()
	return cm.commit(ctx, owned)
}

func (cm *committer) commit(ctx context.Context, tps map[connector.TopicPartition]bool) error {
	offsets := cm.out.writtenOffsets(tps)
	if len(offsets) == 0 || cm.c == nil {
		return nil
	}
	return withoutNotOwner(cm.c.CommitOffsetsMap(ctx, offsets))
}

// withoutNotOwner drops the refusals of partitions that a rebalance took
// away meanwhile: they are the new owner's to commit.
func withoutNotOwner(err error) error {
	if err == nil {
		return nil
	}
	var errs []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	} else {
		errs = []error{err}
	}
	var kept []error
	for _, e := range errs {
		if !errors.Is(e, connector.ErrNotOwner) {
			kept = append(kept, e)
		}
	}
	return errors.Join(kept...)
}

// BeforeReleasingPartitions commits what was written out of the released
// partitions, while the connector still allows it, as Kafka's auto-commit
// does in a rebalance.
func (cm *committer) BeforeReleasingPartitions(ctx context.Context, _ *connector.ConsumerConnector, released map[string][]int32, lost bool) {
	tps := map[connector.TopicPartition]bool{}
	for topic, ps := range released {
		for _, p := range ps {
			tps[connector.TopicPartition{Topic: topic, Partition: p}] = true
		}
	}
	cm.mu.Lock()
	for tp := range tps {
		delete(cm.owned, tp)
	}
	cm.released = tps
	cm.mu.Unlock()
	if cm.enabled && !lost {
		cm.report(cm.commit(ctx, tps))
	}
}

// BeforeStartingFetchers records the partitions the member gains. What
// was written out of a partition that comes back after another member
// had it is forgotten: that member may have committed beyond it. A
// partition released just before and gained again at once (an eager
// rebalance that leaves it with this member) keeps its own.
func (cm *committer) BeforeStartingFetchers(_ context.Context, _ *connector.ConsumerConnector, gained map[string][]int32) {
	cm.mu.Lock()
	fresh := map[connector.TopicPartition]bool{}
	for topic, ps := range gained {
		for _, p := range ps {
			tp := connector.TopicPartition{Topic: topic, Partition: p}
			if !cm.released[tp] {
				fresh[tp] = true
			}
			cm.owned[tp] = true
		}
	}
	cm.released = nil
	cm.mu.Unlock()
	cm.out.forget(fresh)
}
