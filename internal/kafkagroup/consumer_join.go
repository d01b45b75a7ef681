package kafkagroup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/kip848"
)

// beginJoin reads the session timeout the coordinator enforces on the
// group, which the generations started from now on follow.
func (p *consumer) beginJoin(*Generation) { p.readSessionTimeout() }

func (p *consumer) endJoin() {}

// joinOnce sends heartbeats until what the member owns and the
// coordinator's assignment agree; then the generation starts. The first
// heartbeat tells the coordinator which partitions the member owns now
// (the previous generation's, without those the coordinator revoked,
// which the caller has stopped and committed by now: this acknowledges
// the revocation); a member fenced meanwhile joins again with epoch 0.
func (p *consumer) joinOnce(ctx context.Context, c *coordinator) (*Generation, error) {
	m := p.m
	for round := 0; ; round++ {
		if round > 100 {
			return nil, errors.New("the assignment does not settle")
		}
		if round > 0 {
			var err error
			if c, err = m.coordinator(ctx); err != nil {
				return nil, err
			}
		}
		if err := p.settleTarget(); err != nil {
			return nil, err
		}
		resp, sent, err := p.send(ctx, c)
		if err != nil {
			return nil, err
		}
		if hbErr := kafkaError(resp.ErrorCode, resp.ErrorMessage); hbErr != nil {
			switch classify(resp.ErrorCode) {
			case classFenced:
				p.fenced(c)
				m.log.Info("fenced while joining; joining again with epoch 0", "err", hbErr)
				continue
			case classMoved:
				m.dropCoordinator(c, hbErr)
				return nil, hbErr
			case classRetry:
				return nil, hbErr
			default:
				return nil, p.fatal(hbErr)
			}
		}
		p.accept(resp)
		if p.settled() {
			p.mu.Lock()
			assignment := cloneAssignment(p.owned)
			gen := newGeneration(p.epoch, p.memberID, "", false, assignment, p.leaseTermLocked(), sent.at, time.Time{}, nil)
			p.mu.Unlock()
			m.log.Info("generation started", "epoch", gen.ID, "member", gen.MemberID, "partitions", gen.Partitions())
			return gen, nil
		}
	}
}

// fatal wraps err as ErrFatal, naming the setting to check when it can.
func (p *consumer) fatal(err error) error {
	m := p.m
	var ke *codeError
	if errors.As(err, &ke) {
		switch ke.Code {
		case 35: // UNSUPPORTED_VERSION
			return fmt.Errorf("%w: group %s: %w: %w", ErrFatal, m.cfg.Group, ErrUnsupported, err)
		case codeUnsupportedAssignor:
			return fmt.Errorf("%w: group %s: group.remote.assignor %q: %w", ErrFatal, m.cfg.Group, m.cfg.RemoteAssignor, err)
		}
	}
	return fmt.Errorf("%w: group %s: ConsumerGroupHeartbeat: %w", ErrFatal, m.cfg.Group, err)
}

// sentBeat is what one heartbeat told the coordinator, and when.
type sentBeat struct {
	at time.Time
	// owned is what the request said the member owns (nil: nothing, as a
	// joining member).
	owned map[string][]int32
}

// send sends one heartbeat with the member's state and returns the
// answer and what was sent. A failed connection drops the coordinator.
func (p *consumer) send(ctx context.Context, c *coordinator) (*kip848.HeartbeatResponse, sentBeat, error) {
	m, cc := p.m, c.consumer
	p.mu.Lock()
	sent := sentBeat{owned: cloneAssignment(p.owned)}
	req := &kip848.HeartbeatRequest{
		GroupID:              m.cfg.Group,
		MemberID:             p.memberID,
		MemberEpoch:          p.epoch,
		InstanceID:           m.instanceID(),
		RebalanceTimeoutMs:   int32(m.cfg.RebalanceTimeout.Milliseconds()),
		SubscribedTopicNames: m.cfg.Topics,
		SubscribedTopicRegex: p.topicRegex(), // nil (null) with topic names
		TopicPartitions:      p.ownedLocked(),
	}
	p.mu.Unlock()
	if m.cfg.RackID != "" {
		req.RackID = &m.cfg.RackID
	}
	if m.cfg.RemoteAssignor != "" {
		req.ServerAssignor = &m.cfg.RemoteAssignor
	}
	if cc.hbVersion == 0 && req.MemberEpoch == 0 {
		req.MemberID = "" // version 0: the coordinator names the member
	}
	if req.MemberEpoch == 0 {
		req.TopicPartitions = []kip848.TopicPartitions{} // a joining member owns nothing
		sent.owned = nil
	}
	sent.at = time.Now()
	resp, err := cc.hb.Heartbeat(ctx, req, cc.hbVersion)
	if err != nil {
		m.connectionFailed(c, err)
		return nil, sent, fmt.Errorf("heartbeat to the coordinator, broker %d at %s: %w", c.id, c.addr, err)
	}
	return resp, sent, nil
}

// topicRegex is the SubscribedTopicRegex of a heartbeat: the regex of a
// subscription by regex, nil (null) for one by topic names.
func (p *consumer) topicRegex() *string {
	if p.m.cfg.TopicRegex == "" {
		return nil
	}
	re := p.m.cfg.TopicRegex
	return &re
}

// accept takes the state an answer without error gives.
func (p *consumer) accept(resp *kip848.HeartbeatResponse) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if resp.MemberID != nil && *resp.MemberID != "" {
		p.memberID = *resp.MemberID
	}
	if resp.MemberEpoch != p.epoch {
		p.m.log.Debug("member epoch", "from", p.epoch, "to", resp.MemberEpoch)
	}
	p.epoch = resp.MemberEpoch
	p.setIntervalLocked(resp.HeartbeatIntervalMs)
	if resp.Assignment != nil {
		p.target = resp.Assignment
	}
}

// settleTarget makes what the member owns the coordinator's latest
// assignment (the caller has stopped the previous generation), reading
// topic ids first if some are unknown.
func (p *consumer) settleTarget() error {
	p.mu.Lock()
	target := p.target
	_, missing := p.resolveLocked(target)
	p.mu.Unlock()
	if target == nil {
		return nil
	}
	if missing {
		if err := p.refreshTopicIDs(); err != nil {
			return err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	resolved, missing := p.resolveLocked(p.target)
	if missing {
		p.m.log.Warn("assigned partitions of topics whose id the metadata does not name yet; taking them later")
	}
	p.owned = resolved
	return nil
}

// settled reports whether the member owns what the coordinator assigned
// (of the topics it can name): then no heartbeat needs to tell it more.
func (p *consumer) settled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.target == nil {
		return true
	}
	resolved, _ := p.resolveLocked(p.target)
	return sameAssignment(resolved, p.owned)
}

func cloneAssignment(a map[string][]int32) map[string][]int32 {
	out := make(map[string][]int32, len(a))
	for t, ps := range a {
		out[t] = append([]int32(nil), ps...)
	}
	return out
}
