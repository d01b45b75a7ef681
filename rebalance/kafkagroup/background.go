package kafkagroup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/backoff"
	gc "github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/grouperr"
	"github.com/zkconsumer/zkconsumer/internal/grouplease"
)

// startBackground starts the goroutines of gen: heartbeats, and the
// metadata check. They run until Join or Close stops them, which may be
// after gen ended: a member told ErrRebalanceStarted keeps heartbeating
// while it commits.
func (m *Member) startBackground(gen *Generation, joined []string, w watch) {
	ctx, cancel := context.WithCancel(m.ctx)
	m.mu.Lock()
	m.bgCancel = cancel
	m.mu.Unlock()
	m.bg.Add(2)
	go func() {
		defer m.bg.Done()
		m.heartbeatLoop(ctx, gen)
	}()
	go func() {
		defer m.bg.Done()
		m.metadataLoop(ctx, gen, joined, w)
	}()
}

// stopBackground ends the goroutines of the current generation and waits
// for them (a heartbeat in flight takes at most RequestTimeout).
func (m *Member) stopBackground() {
	m.mu.Lock()
	cancel := m.bgCancel
	m.bgCancel = nil
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	m.bg.Wait()
}

// heartbeatLoop sends a heartbeat every HeartbeatInterval (at most a
// third of the lease a heartbeat gives: see grouplease.HeartbeatInterval),
// renews gen's lease from the send time of each one answered without
// error, and ends gen as the answers require.
func (m *Member) heartbeatLoop(ctx context.Context, gen *Generation) {
	lastOK := time.Now()
	gaps := grouplease.Gaps{Log: m.log, Session: m.cfg.SessionTimeout}
	defer func() {
		m.log.Info("heartbeats stopped", "generation", gen.ID, "longest_heartbeat_gap", gaps.Longest(),
			"lost", errors.Is(gen.Err(), ErrMembershipLost))
	}()
	interval := grouplease.HeartbeatInterval(m.cfg.HeartbeatInterval, m.leaseTerm())
	wait := interval
	for backoff.Sleep(ctx, wait) {
		wait = interval
		sent := time.Now()
		err := m.heartbeat(gen)
		var kerr sarama.KError
		errors.As(err, &kerr)
		switch {
		case err == nil:
			now := time.Now()
			gaps.Record(lastOK, now)
			lastOK = now
			gen.lease.Renew(sent)
			m.recovered("heartbeat")
		case kerr == sarama.ErrRebalanceInProgress:
			now := time.Now() // the coordinator counted the heartbeat
			gaps.Record(lastOK, now)
			lastOK = now
			if gen.Err() == nil {
				m.log.Info("group is rebalancing", "generation", gen.ID)
			}
			gen.end(ErrRebalanceStarted)
		case kerr == sarama.ErrUnknownMemberId:
			m.forgetMemberID(gen.MemberID)
			m.lost(gen, kerr)
			return
		case kerr == sarama.ErrIllegalGeneration:
			m.lost(gen, kerr)
			return
		case kerr == sarama.ErrFencedInstancedId, kerr == sarama.ErrGroupAuthorizationFailed:
			gen.end(m.setFatal(fmt.Errorf("Heartbeat: %w", kerr)))
			return
		case authFailed(err):
			gen.end(fmt.Errorf("%w: group %s: Heartbeat: %w", ErrFatal, m.cfg.Group, err))
			return
		default:
			if ctx.Err() != nil {
				return
			}
			wait = m.cfg.RetryBackoff
			since := time.Since(lastOK)
			if since > m.cfg.SessionTimeout {
				m.lost(gen, fmt.Errorf("no successful heartbeat for %v (session.timeout.ms): %w", since.Round(time.Millisecond), err))
				return
			}
			if since >= reportAfter {
				m.report("heartbeat", fmt.Errorf("kafkagroup: heartbeats of generation %d failing for %v (no message is handed out once the lease lapses; the membership is lost after session.timeout.ms %v): %w",
					gen.ID, since.Round(time.Second), m.cfg.SessionTimeout, err))
			} else {
				m.log.Debug("heartbeat failed", "generation", gen.ID, "err", err)
			}
		}
	}
}

// lost ends gen with ErrMembershipLost and why.
func (m *Member) lost(gen *Generation, why error) {
	if gen.Err() == nil {
		m.log.Warn("membership lost", "generation", gen.ID, "member", gen.MemberID, "err", why)
	}
	gen.end(fmt.Errorf("%w: %w", ErrMembershipLost, why))
}

// heartbeat sends one Heartbeat for gen. Coordinator errors and failed
// connections make the next request look the coordinator up again.
func (m *Member) heartbeat(gen *Generation) error {
	c, err := m.coordinator()
	if err != nil {
		return err
	}
	resp, err := c.hb.Heartbeat(&sarama.HeartbeatRequest{Version: c.version(gc.APIHeartbeat), GroupId: m.cfg.Group,
		GenerationId: gen.ID, MemberId: gen.MemberID, GroupInstanceId: m.instanceID()})
	if err != nil {
		m.connectionFailed(c, err)
		return fmt.Errorf("to the coordinator, broker %d at %s: %w", c.id, c.addr, m.explain(err))
	}
	if resp.Err == sarama.ErrNoError {
		return nil
	}
	if grouperr.CoordinatorMoved(resp.Err) {
		m.dropCoordinator(c, resp.Err)
	}
	return resp.Err
}

// metadataLoop checks every MetadataMaxAge, as Java's consumer does on
// each metadata refresh, whether the member must rejoin: the topics a
// wildcard subscription matches changed, or the partition count of a
// watched topic changed (see watch: every member watches its own
// subscription, the leader every topic of the group), or a watched topic
// appeared or vanished. It then ends gen with ErrRebalanceStarted; the
// caller's Join starts the group's rebalance. A failed check is reported
// (Config.OnError) and tried again at the next period.
func (m *Member) metadataLoop(ctx context.Context, gen *Generation, joined []string, w watch) {
	for backoff.Sleep(ctx, m.cfg.MetadataMaxAge) {
		if gen.Err() != nil {
			return
		}
		var (
			counts map[string]int32
			err    error
		)
		if m.cfg.Filter != nil {
			var topics []string
			var all map[string]int32
			if topics, all, err = m.subscription(); err == nil && !slices.Equal(topics, joined) {
				m.log.Info("subscribed topics changed: rejoining", "before", joined, "now", topics)
				gen.end(ErrRebalanceStarted)
				return
			}
			if err == nil && !slices.ContainsFunc(w.topics, func(t string) bool { return !slices.Contains(topics, t) }) {
				counts = all // every watched topic is a subscribed one: no second request
			}
		}
		if err == nil && counts == nil {
			counts, err = m.partitionCounts(w.topics)
		}
		if err != nil {
			if ctx.Err() == nil {
				m.report("metadata", fmt.Errorf("kafkagroup: check the partitions of group %s's topics (retried every metadata.max.age.ms %v): %w", m.cfg.Group, m.cfg.MetadataMaxAge, err))
			}
			continue
		}
		m.recovered("metadata")
		if now := pick(counts, w.topics); !maps.Equal(now, w.counts) {
			m.log.Info("partitions of the group's topics changed: rejoining", "before", w.counts, "now", now)
			gen.end(ErrRebalanceStarted)
			return
		}
	}
}

// pick returns the counts of topics among counts.
func pick(counts map[string]int32, topics []string) map[string]int32 {
	out := make(map[string]int32, len(topics))
	for _, t := range topics {
		if n, ok := counts[t]; ok {
			out[t] = n
		}
	}
	return out
}
