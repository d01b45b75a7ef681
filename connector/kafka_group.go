package connector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/backoff"
	"github.com/zkconsumer/zkconsumer/internal/goid"
	"github.com/zkconsumer/zkconsumer/internal/secure"
	"github.com/zkconsumer/zkconsumer/rebalance"
	"github.com/zkconsumer/zkconsumer/rebalance/kafkagroup"
	"github.com/zkconsumer/zkconsumer/stream"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// kafkaGroup is the connector's membership in a group coordinated by
// Kafka's brokers (zkconsumer.group.coordination=kafka). Its generation
// loop drives a kafkagroup.Member: Join, spread the assigned partitions
// over the streams, start the data path (assign), wait for the generation
// to end, stop it and commit (revoke), Join again. The data path, the
// commits' bookkeeping and the listener calls are the ZooKeeper mode's.
type kafkaGroup struct {
	c       *ConsumerConnector
	brokers *kafkaBrokers
	sec     *secure.Client // TLS and SASL of the member's connections

	// Set by join, before the loop starts.
	member   *kafkagroup.Member
	threads  map[string]int // streams per topic; "" for a wildcard's
	wildcard bool

	ctx    context.Context // ended by Shutdown
	cancel context.CancelFunc
	done   chan struct{} // closed when the loop has returned
	first  chan error    // the first generation's start, or why there is none

	closeMu  sync.Mutex
	closeCtx context.Context // Shutdown's, set before ctx ends; nil before

	// loopGoroutine is the loop's goroutine while it calls into the
	// application (the listener), 0 otherwise: Shutdown called from the
	// listener must not wait for the loop.
	loopGoroutine atomic.Uint64
	firstOnce     sync.Once
}

func newKafkaGroup(c *ConsumerConnector, brokers *kafkaBrokers, sec *secure.Client) *kafkaGroup {
	ctx, cancel := context.WithCancel(context.Background())
	return &kafkaGroup{c: c, brokers: brokers, sec: sec, ctx: ctx, cancel: cancel,
		done: make(chan struct{}), first: make(chan error, 1)}
}

// join creates the member for sub and starts the generation loop, then
// waits for the first generation to start: CreateMessageStreams returns
// with the partitions assigned, as in ZooKeeper mode.
func (k *kafkaGroup) join(ctx context.Context, sub rebalance.Subscription) error {
	cfg := k.c.cfg
	kc := kafkagroup.Config{
		Brokers:               cfg.brokerList(),
		Group:                 cfg.GroupID,
		InstanceID:            cfg.GroupInstanceID,
		Filter:                sub.Filter,
		ExcludeInternalTopics: cfg.ExcludeInternalTopics,
		Assignors:             []string{cfg.PartitionAssignmentStrategy},
		SessionTimeout:        cfg.SessionTimeout,
		RebalanceTimeout:      cfg.MaxPollInterval,
		HeartbeatInterval:     cfg.HeartbeatInterval,
		MetadataMaxAge:        cfg.MetadataMaxAge,
		RetryBackoff:          max(cfg.RefreshLeaderBackoff, time.Millisecond), // zero would mean its default
		RequestTimeout:        cfg.SocketTimeout,
		ClientID:              cfg.ClientID,
		Sarama:                brokerSaramaConfig(nil, cfg.SocketTimeout, k.c.dialer),
		Secure:                k.sec.Apply,
		Logger:                k.c.baseLog.With("consumer", k.c.id),
	}
	k.threads = map[string]int{}
	if sub.Filter != nil {
		k.wildcard = true
		k.threads[""] = sub.Streams
	} else {
		kc.Topics = slices.Sorted(maps.Keys(sub.Topics))
		maps.Copy(k.threads, sub.Topics)
	}
	member, err := kafkagroup.New(kc)
	if err != nil {
		return fmt.Errorf("connector: %w", err)
	}
	k.member = member
	k.c.mu.Lock()
	k.c.offsets = &kafkaOffsetStore{member: member}
	k.c.mu.Unlock()
	go k.run()
	select {
	case err := <-k.first:
		if err != nil {
			return fmt.Errorf("connector: join group %s: %w", cfg.GroupID, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("connector: join group %s: %w", cfg.GroupID, context.Cause(ctx))
	}
}

func (k *kafkaGroup) firstDone(err error) {
	k.firstOnce.Do(func() { k.first <- err })
}

// run is the generation loop; it returns when Shutdown ends k.ctx or the
// member hits a fatal error.
func (k *kafkaGroup) run() {
	defer close(k.done)
	defer k.firstDone(ErrShutdown)
	c := k.c
	started, attempts := time.Now(), 0
	for {
		attempts++
		kgen, err := k.member.Join(k.ctx)
		if err != nil {
			switch {
			case k.ctx.Err() != nil || errors.Is(err, kafkagroup.ErrMemberClosed):
				k.rebalanced(rebalance.RebalanceAborted, attempts, started)
				return
			case errors.Is(err, kafkagroup.ErrFatal):
				k.rebalanced(rebalance.RebalanceFailed, attempts, started)
				c.report(fmt.Errorf("connector: %w", err))
				k.firstDone(err)
				return
			}
			c.report(fmt.Errorf("connector: join group %s: %w", c.cfg.GroupID, err))
			backoff.Sleep(k.ctx, c.cfg.RefreshLeaderBackoff) // the next Join sees Shutdown
			continue
		}
		gen := k.generation(kgen)
		actx, cancel := context.WithTimeout(k.ctx, c.cfg.MaxPollInterval)
		err = k.inLoop(func() error { return c.assign(actx, gen) })
		cancel()
		if err != nil {
			if k.ctx.Err() == nil {
				c.report(fmt.Errorf("connector: start generation %d: %w", kgen.ID, err))
			}
			k.end(gen, false)
			backoff.Sleep(k.ctx, c.cfg.RefreshLeaderBackoff)
			continue
		}
		k.rebalanced(rebalance.RebalanceSucceeded, attempts, started)
		attempts = 0
		k.firstDone(nil)

		stalled := k.wait(gen)
		started = time.Now()
		cause := kgen.Err()
		lost := cause != nil && !errors.Is(cause, kafkagroup.ErrRebalanceStarted)
		k.end(gen, lost)
		switch {
		case errors.Is(cause, kafkagroup.ErrFatal):
			c.report(fmt.Errorf("connector: %w", cause))
			return
		case errors.Is(cause, kafkagroup.ErrMembershipLost):
			c.report(fmt.Errorf("%w: %w", rebalance.ErrOwnershipLost, cause))
		}
		if k.ctx.Err() != nil {
			return
		}
		if len(stalled) > 0 {
			k.leave(stalled)
		}
	}
}

// closeCommitTimeout bounds the commit of a Kafka-mode member's consumed
// offsets on Shutdown, as the default timeout of Java's KafkaConsumer.close
// (30 s) bounds its commit on close.
const closeCommitTimeout = 30 * time.Second

// end revokes gen, in an orderly way (committing) unless lost, within the
// rebalance timeout, and, on Shutdown, within Shutdown's context.
func (k *kafkaGroup) end(gen *generation, lost bool) {
	parent := context.Background()
	if k.ctx.Err() != nil {
		k.closeMu.Lock()
		if k.closeCtx != nil {
			parent = k.closeCtx
		}
		k.closeMu.Unlock()
	}
	ctx, cancel := context.WithTimeout(parent, k.c.cfg.MaxPollInterval)
	defer cancel()
	if err := k.inLoop(func() error { return k.c.revoke(ctx, gen, lost) }); err != nil {
		k.c.report(fmt.Errorf("connector: revoke generation %d: %w", gen.id, err))
	}
}

// rebalanced reports a rebalance to the metrics.
func (k *kafkaGroup) rebalanced(outcome rebalance.RebalanceOutcome, attempts int, started time.Time) {
	if k.c.metrics != nil {
		k.c.metrics.Rebalance(RebalanceEvent{Outcome: outcome, Attempts: attempts, Duration: time.Since(started)})
	}
}

// inLoop runs f, marking this goroutine as the loop's.
func (k *kafkaGroup) inLoop(f func() error) error {
	k.loopGoroutine.Store(goid.Current())
	defer k.loopGoroutine.Store(0)
	return f()
}

// inListener reports whether the caller runs inside the loop's call of
// the application's listener.
func (k *kafkaGroup) inListener() bool {
	id := k.loopGoroutine.Load()
	return id != 0 && id == goid.Current()
}

// generation maps kgen's partitions onto this member's streams: each
// topic's partitions are spread over that topic's streams (a wildcard's
// streams serve every topic) as Kafka's range assignor spreads a
// consumer's partitions over its threads, so that the mapping is the same
// on every join with the same assignment.
func (k *kafkaGroup) generation(kgen *kafkagroup.Generation) *generation {
	owned := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for topic, parts := range kgen.Assignment {
		n := k.threads[topic]
		if k.wildcard {
			n = k.threads[""]
		}
		if n < 1 {
			k.c.log.Warn("assigned partitions of a topic this member has no stream for; ignoring them", "topic", topic)
			continue
		}
		for i, p := range spreadRange(parts, n) {
			for _, part := range p {
				owned[zkutil.TopicPartition{Topic: topic, Partition: part}] = zkutil.ConsumerThreadID{ConsumerID: k.c.id, Thread: i}
			}
		}
	}
	return &generation{
		id: int64(kgen.ID), owned: owned,
		assignment: rebalance.Assignment{k.c.id: owned},
		ctx:        kgen.Context(), fence: kafkaFence{kgen}, kafka: kgen,
	}
}

// spreadRange splits parts (sorted) into n consecutive ranges, the first
// len(parts)%n of them one longer.
func spreadRange(parts []int32, n int) [][]int32 {
	out := make([][]int32, n)
	per, extra := len(parts)/n, len(parts)%n
	start := 0
	for i := range n {
		size := per
		if i < extra {
			size++
		}
		out[i] = parts[start : start+size]
		start += size
	}
	return out
}

// close stops the loop (the current generation is revoked and committed)
// and the member, which leaves the group (dynamic members only). Bounded
// by ctx, by the rebalance timeout for the revoke, by closeCommitTimeout
// for its commit, and by the member's own bounds.
func (k *kafkaGroup) close(ctx context.Context) error {
	k.closeMu.Lock()
	if k.closeCtx == nil {
		k.closeCtx = ctx
	}
	k.closeMu.Unlock()
	k.cancel()
	if k.member == nil {
		return nil
	}
	select {
	case <-k.done:
	case <-ctx.Done():
		// The revoke still runs; Close ends the member under it.
	}
	err := k.member.Close()
	<-k.done
	return err
}

// commit writes offsets as a member of kgen, reporting the commit to the
// metrics. The last commit of a generation (last: on revoke and on
// Shutdown) retries until ctx ends, on Shutdown for closeCommitTimeout at
// most (kafkagroup.Member.CommitFinal); others give up after a few tries
// (kafkagroup.Member.Commit).
func (k *kafkaGroup) commit(ctx context.Context, kgen *kafkagroup.Generation, offsets map[zkutil.TopicPartition]int64, last bool) error {
	start := time.Now()
	var err error
	if last {
		if k.ctx.Err() != nil { // Shutdown
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, closeCommitTimeout)
			defer cancel()
		}
		err = k.member.CommitFinal(ctx, kgen, offsets)
	} else {
		err = k.member.Commit(ctx, kgen, offsets)
	}
	if k.c.metrics != nil {
		k.c.metrics.Commit(CommitEvent{Store: StoreKafka, Partitions: len(offsets), Duration: time.Since(start), Err: err})
	}
	if err != nil {
		return fmt.Errorf("connector: %w", err)
	}
	return nil
}

// kafkaFence lets a generation's messages be handed out only while its
// lease holds (kafkagroup.Generation.LeaseHeld): a member frozen or cut
// off from the coordinator past the lease delivers nothing more of them
// until a heartbeat sent after the lapse succeeds, and nothing at all once
// its membership is lost.
type kafkaFence struct{ gen *kafkagroup.Generation }

var _ stream.Fence = kafkaFence{}

func (f kafkaFence) Held() bool               { return f.gen.LeaseHeld() }
func (f kafkaFence) Changed() <-chan struct{} { return f.gen.LeaseChanged() }

// kafkaOffsetStore fetches the group's offsets from the coordinator.
// Commits go through kafkaGroup.commit, which needs the generation.
type kafkaOffsetStore struct{ member *kafkagroup.Member }

func (s *kafkaOffsetStore) Fetch(ctx context.Context, tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, map[zkutil.TopicPartition]error, error) {
	out, err := s.member.Fetch(ctx, tps)
	return out, nil, err
}

func (s *kafkaOffsetStore) Commit(context.Context, map[zkutil.TopicPartition]int64) error {
	return errors.New("connector: Kafka-coordinated commits need the generation")
}

func (s *kafkaOffsetStore) Close() error { return nil }
