package connector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/backoff"
	"github.com/zkconsumer/zkconsumer/internal/kafkagroup"
	"github.com/zkconsumer/zkconsumer/internal/secure"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/zkgroup"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// kafkaGroup is the connector's membership in a group coordinated by
// Kafka's brokers (zkconsumer.group.coordination=kafka). Its generation
// loop drives a kafkagroup.Member: Join, spread the assigned partitions
// over the streams, start the data path (assign), wait for the generation
// to end, stop it and commit (revoke), Join again. The data path, the
// commits' bookkeeping and the listener calls are the ZooKeeper mode's.
//
// Each CreateMessageStreams runs its own member and loop (a kafkaRun). A
// first join that fails, because CreateMessageStreams' context ended or
// with a fatal error, stops both and leaves the group before
// CreateMessageStreams returns, so that nothing of it stays behind and
// CreateMessageStreams can be called again.
type kafkaGroup struct {
	c       *ConsumerConnector
	brokers *kafkaBrokers
	sec     *secure.Client // TLS and SASL of the member's connections

	mu     sync.Mutex
	run    *kafkaRun // the current one; nil before the first join and after a failed one
	closed bool      // Shutdown
}

// kafkaRun is one member of the group and its generation loop.
type kafkaRun struct {
	k        *kafkaGroup
	member   *kafkagroup.Member
	threads  map[string]int // streams per topic; "" for a wildcard's
	wildcard bool

	ctx    context.Context // ended by stop
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the loop has returned
	first  chan error    // the first generation's start (nil), or why there is none; buffered, written once

	stopMu  sync.Mutex
	stopCtx context.Context // stop's, set before ctx ends; nil before

	// chainCancel ends the context of a chain of cooperative generations
	// (their fetchers run under it); nil while there is none. Used by the
	// loop's goroutine only.
	chainCancel context.CancelFunc
}

func newKafkaGroup(c *ConsumerConnector, brokers *kafkaBrokers, sec *secure.Client) *kafkaGroup {
	return &kafkaGroup{c: c, brokers: brokers, sec: sec}
}

// current returns the current run, nil if there is none.
func (k *kafkaGroup) current() *kafkaRun {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.run
}

// join creates the member for sub and starts the generation loop, then
// waits for the first generation to start: CreateMessageStreams returns
// with the partitions assigned, as in ZooKeeper mode. Failures the member
// retries meanwhile are reported on Errors. If ctx ends first, or the
// member meets a fatal error (a wrong password, an untrusted certificate,
// ...), the member leaves the group and is closed before join returns the
// error, which wraps ctx's cause and the last failure.
func (k *kafkaGroup) join(ctx context.Context, sub zkgroup.Subscription) error {
	cfg := k.c.cfg
	r := &kafkaRun{k: k, done: make(chan struct{}), first: make(chan error, 1)}
	assignors, reason := cfg.kafkaAssignors()
	if reason != "" { // Validate refused it already
		return fmt.Errorf("connector: partition.assignment.strategy %q: %s", formatStrategies(cfg.PartitionAssignmentStrategy), reason)
	}
	kc := kafkagroup.Config{
		Brokers:               cfg.brokerList(),
		Group:                 cfg.GroupID,
		InstanceID:            cfg.GroupInstanceID,
		Filter:                sub.Filter,
		ExcludeInternalTopics: cfg.ExcludeInternalTopics,
		Assignors:             assignors,
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
		OnError:               func(err error) { k.c.report(fmt.Errorf("connector: %w", err)) },
	}
	r.threads = map[string]int{}
	if sub.Filter != nil {
		r.wildcard = true
		r.threads[""] = sub.Streams
	} else {
		kc.Topics = slices.Sorted(maps.Keys(sub.Topics))
		maps.Copy(r.threads, sub.Topics)
	}
	member, err := k.newMember(kc)
	if err != nil {
		return fmt.Errorf("connector: %w", err)
	}
	r.member = member
	r.ctx, r.cancel = context.WithCancelCause(context.Background())
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		_ = member.Close()
		return ErrShutdown
	}
	k.run = r
	// Set before Shutdown can see r (it closes the offset store).
	k.c.mu.Lock()
	k.c.offsets = &kafkaOffsetStore{member: member}
	k.c.mu.Unlock()
	k.mu.Unlock()
	go r.loop()

	select {
	case err := <-r.first:
		if err == nil {
			return nil
		}
		k.abandon(r, err)
		return fmt.Errorf("connector: %w", err)
	case <-ctx.Done():
	}
	select {
	case err := <-r.first:
		if err == nil {
			return nil // it started as ctx ended
		}
		k.abandon(r, err)
		return fmt.Errorf("connector: %w", err)
	default:
	}
	cause := context.Cause(ctx)
	k.abandon(r, cause)
	// The loop's Join, ended by cause, tells the last failure.
	if err := <-r.first; errors.Is(err, cause) {
		return fmt.Errorf("connector: %w", err)
	}
	return fmt.Errorf("connector: join group %s: %w", cfg.GroupID, cause)
}

// abandon stops r, whose first generation did not start, for why: its
// loop ends, its member leaves the group and closes. It waits at most
// closeCommitTimeout for the loop before closing the member, which then
// ends the loop's requests.
func (k *kafkaGroup) abandon(r *kafkaRun, why error) {
	ctx, cancel := context.WithTimeout(context.Background(), closeCommitTimeout)
	defer cancel()
	if err := r.stop(ctx, why); err != nil {
		k.c.log.Warn("leaving the group after a failed first join", "err", err)
	}
	k.mu.Lock()
	if k.run == r {
		k.run = nil
	}
	k.mu.Unlock()
}

// firstDone records the start of the first generation (nil), or why
// there is none; only the first call counts.
func (r *kafkaRun) firstDone(err error) {
	select {
	case r.first <- err:
	default:
	}
}

// loop is the generation loop of both group protocols; it returns when
// stop ends r.ctx or the member hits a fatal error. A generation is
// started (its partitions spread over the streams, the data path
// started), followed until it ends (see follow), then revoked, and the
// member joins again.
//
// Under group.protocol=consumer (KIP-848) a generation is a membership,
// and its assignment changes incrementally within it: follow revokes and
// starts only the partitions that move, and the partitions kept flow
// throughout, on the same stream.
//
// Under the classic cooperative protocol (kafkagroup.Generation.Cooperative) a
// generation that ends with a rebalance is not revoked: its partitions
// keep flowing while the member commits and rejoins (kept), and the next
// generation, which continues it, takes them over (handOverKafka), giving
// up only those it does not keep; when it gives some up, the member
// rejoins at once, as Java's consumer does, so that the coordinator hands
// them to their new owner.
func (r *kafkaRun) loop() {
	defer close(r.done)
	defer r.firstDone(ErrShutdown)
	k, c := r.k, r.k.c
	started, attempts := time.Now(), 0
	var kept *generation // a cooperative generation still delivering while the member rejoins
	for {
		attempts++
		kgen, err := r.member.Join(r.ctx)
		if err != nil {
			switch {
			case r.ctx.Err() != nil || errors.Is(err, kafkagroup.ErrMemberClosed):
				r.endKept(kept, false)
				k.rebalanced(RebalanceAborted, attempts, started)
				r.firstDone(err)
				return
			case errors.Is(err, kafkagroup.ErrFatal):
				r.endKept(kept, true)
				k.rebalanced(RebalanceFailed, attempts, started)
				c.report(fmt.Errorf("connector: %w", err))
				r.firstDone(err)
				return
			}
			c.report(fmt.Errorf("connector: join group %s: %w", c.cfg.GroupID, err))
			backoff.Sleep(r.ctx, c.cfg.RefreshLeaderBackoff) // the next Join sees stop
			continue
		}
		var (
			gen      *generation
			rejoin   bool // partitions were given up: rejoin at once
			startErr error
		)
		if kept != nil && !kgen.Continues {
			// The membership was lost while rejoining: what was kept may
			// be another member's already. The coordinator may have been
			// told this member owned it, so that it assigned it to nobody:
			// rejoin once started, to have it handed out.
			r.endKept(kept, true)
			rejoin = len(kept.owned) > 0
			kept = nil
		}
		if kept != nil {
			gen = r.generation(kgen, kept)
			rejoin, startErr = r.handOverKafka(kept, gen)
			if startErr != nil {
				gen = k.c.currentGeneration()
			}
		} else {
			gen = r.generation(kgen, nil)
			actx, cancel := context.WithTimeout(r.ctx, c.cfg.MaxPollInterval)
			startErr = c.assign(actx, gen)
			cancel()
			if startErr != nil {
				if r.ctx.Err() == nil {
					c.report(fmt.Errorf("connector: start generation %d: %w", kgen.ID, startErr))
				}
				r.end(gen, false)
				r.giveBack()
				backoff.Sleep(r.ctx, c.cfg.RefreshLeaderBackoff)
				continue
			}
		}
		kept = nil
		k.rebalanced(RebalanceSucceeded, attempts, started)
		attempts = 0
		r.firstDone(nil)

		var (
			stalled []*streamcore.Control
			failed  bool // an update of the assignment could not be applied
		)
		if !rejoin && startErr == nil {
			gen, stalled, failed = r.follow(kgen, gen)
		} else if startErr != nil && r.ctx.Err() == nil {
			// Partitions gained could not be started: rejoin, so that
			// the coordinator hands them out again.
			c.report(fmt.Errorf("connector: start generation %d: %w", kgen.ID, startErr))
			backoff.Sleep(r.ctx, c.cfg.RefreshLeaderBackoff)
		}
		started = time.Now()
		cause := kgen.Err()
		lost := cause != nil && !errors.Is(cause, kafkagroup.ErrRebalanceStarted)
		if kgen.Cooperative && !lost && len(stalled) == 0 && r.ctx.Err() == nil && gen != nil {
			// Keep delivering through the rebalance; commit what was
			// consumed, as Java's consumer does before it rejoins.
			r.commitKept(gen)
			kept = gen
			continue
		}
		if gen != nil {
			r.end(gen, lost)
		}
		switch {
		case errors.Is(cause, kafkagroup.ErrFatal):
			c.report(fmt.Errorf("connector: %w", cause))
			return
		case errors.Is(cause, kafkagroup.ErrMembershipLost):
			c.report(fmt.Errorf("%w: %w", zkgroup.ErrOwnershipLost, cause))
		}
		if r.ctx.Err() != nil {
			return
		}
		switch {
		case len(stalled) > 0:
			r.leave(stalled)
		case failed:
			r.giveBack()
			backoff.Sleep(r.ctx, c.cfg.RefreshLeaderBackoff)
		}
	}
}

// giveBack hands back, under group.protocol=consumer, the partitions of a
// generation that could not be started or updated and was revoked: the
// coordinator counts them as this member's until it hears otherwise, so
// the member leaves, and the next Join joins again with epoch 0. Under the
// classic protocol the next Join's rebalance hands them out.
func (r *kafkaRun) giveBack() {
	if r.k.c.cfg.consumerProtocol() {
		_ = r.member.Leave()
	}
}

// closeCommitTimeout bounds the commit of a Kafka-mode member's consumed
// offsets on Shutdown, as the default timeout of Java's KafkaConsumer.close
// (30 s) bounds its commit on close.
const closeCommitTimeout = 30 * time.Second

// end revokes gen, in an orderly way (committing) unless lost, within the
// rebalance timeout, and, once stopped (Shutdown), within stop's context;
// then the fetchers of a cooperative chain of generations end.
func (r *kafkaRun) end(gen *generation, lost bool) {
	defer r.endChain()
	parent := context.Background()
	if r.ctx.Err() != nil {
		r.stopMu.Lock()
		if r.stopCtx != nil {
			parent = r.stopCtx
		}
		r.stopMu.Unlock()
	}
	ctx, cancel := context.WithTimeout(parent, r.k.c.cfg.MaxPollInterval)
	defer cancel()
	if err := r.k.c.revoke(ctx, gen, lost); err != nil {
		r.k.c.report(fmt.Errorf("connector: revoke generation %d: %w", gen.id, err))
	}
}

// rebalanced reports a rebalance to the metrics.
func (k *kafkaGroup) rebalanced(outcome RebalanceOutcome, attempts int, started time.Time) {
	if k.c.metrics != nil {
		k.c.metrics.Rebalance(RebalanceEvent{Outcome: outcome, Attempts: attempts, Duration: time.Since(started)})
	}
}

// generation maps kgen's partitions onto this member's streams: each
// topic's partitions are spread over that topic's streams (a wildcard's
// streams serve every topic) as Kafka's range assignor spreads a
// consumer's partitions over its threads, so that the mapping is the same
// on every join with the same assignment.
//
// A generation that continues kept (cooperative protocol) keeps the thread
// of every partition kept had: only the partitions it gains are placed, on
// the stream of their topic with the fewest (see place). It runs
// under kept's context, the chain's, which outlives each generation.
func (r *kafkaRun) generation(kgen *kafkagroup.Generation, kept *generation) *generation {
	k := r.k
	owned := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	if kept != nil {
		owned = r.place(kgen.Assignment, kept.owned)
	} else {
		for topic, parts := range kgen.Assignment {
			n := r.streamsFor(topic)
			if n < 1 {
				continue
			}
			for i, p := range spreadRange(parts, n) {
				for _, part := range p {
					owned[zkutil.TopicPartition{Topic: topic, Partition: part}] = zkutil.ConsumerThreadID{ConsumerID: k.c.id, Thread: i}
				}
			}
		}
	}
	ctx := kgen.Context()
	switch {
	case kept != nil:
		ctx = kept.ctx
	case kgen.Cooperative:
		ctx = r.startChain()
	}
	return &generation{
		id: int64(kgen.ID), owned: owned,
		ctx: ctx, fence: kafkaFence{kgen}, kafka: kgen,
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

// close stops the current run, if any (its generation is revoked and
// committed), and its member, which leaves the group (dynamic members
// only), and refuses later joins. Bounded by ctx, by the rebalance timeout
// for the revoke, by closeCommitTimeout for its commit, and by the
// member's own bounds.
func (k *kafkaGroup) close(ctx context.Context) error {
	k.mu.Lock()
	k.closed = true
	r := k.run
	k.mu.Unlock()
	if r == nil {
		return nil
	}
	return r.stop(ctx, ErrShutdown)
}

// cancel ends the current run's loop without waiting for it (Shutdown from
// the listener, which runs in the loop).
func (k *kafkaGroup) cancel() {
	if r := k.current(); r != nil {
		r.cancel(ErrShutdown)
	}
}

// stop ends the loop with cause, then closes the member (which leaves the
// group), and waits for the loop. The revoke of the current generation
// runs within ctx; once ctx ends, closing the member ends what is left.
func (r *kafkaRun) stop(ctx context.Context, cause error) error {
	r.stopMu.Lock()
	if r.stopCtx == nil {
		r.stopCtx = ctx
	}
	r.stopMu.Unlock()
	r.cancel(cause)
	select {
	case <-r.done:
	case <-ctx.Done():
		// The revoke still runs; Close ends the member under it.
	}
	err := r.member.Close()
	<-r.done
	return err
}

// commit writes offsets as a member of kgen, reporting the commit to the
// metrics. The last commit of a generation (last: on revoke and on
// Shutdown) retries until ctx ends, on Shutdown for closeCommitTimeout at
// most (kafkagroup.Member.CommitFinal); others give up after a few tries
// (kafkagroup.Member.Commit).
func (k *kafkaGroup) commit(ctx context.Context, kgen *kafkagroup.Generation, offsets map[zkutil.TopicPartition]int64, last bool) error {
	r := k.current()
	if r == nil {
		return fmt.Errorf("connector: %w", kafkagroup.ErrMemberClosed)
	}
	start := time.Now()
	var err error
	if last {
		if r.ctx.Err() != nil { // Shutdown
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, closeCommitTimeout)
			defer cancel()
		}
		err = r.member.CommitFinal(ctx, kgen, offsets)
	} else {
		err = r.member.Commit(ctx, kgen, offsets)
	}
	if k.c.metrics != nil {
		k.c.metrics.Commit(CommitEvent{Store: OffsetsStorageKafka, Partitions: len(offsets), Duration: time.Since(start), Err: err})
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

var _ streamcore.Fence = kafkaFence{}

func (f kafkaFence) Held() bool               { return f.gen.LeaseHeld() }
func (f kafkaFence) Changed() <-chan struct{} { return f.gen.LeaseChanged() }

// kafkaOffsetStore fetches the group's offsets from the coordinator.
// Commits go through kafkaGroup.commit, which needs the generation.
type kafkaOffsetStore struct{ member *kafkagroup.Member }

func (s *kafkaOffsetStore) Fetch(ctx context.Context, tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, map[zkutil.TopicPartition]error, error) {
	out, err := s.member.Fetch(ctx, tps)
	return out, nil, err
}

func (s *kafkaOffsetStore) Commit(context.Context, owner, map[zkutil.TopicPartition]int64) error {
	return errors.New("connector: Kafka-coordinated commits need the generation")
}

func (s *kafkaOffsetStore) Close() error { return nil }
