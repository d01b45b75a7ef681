package zkgroup

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// join registers the member unless the group runs a strategy it cannot
// share the group with (see admit, as the youngest member): then it stays
// out, unregistered, watching the membership, and returns the
// *StrategyError. A member already registered in the current session is
// checked by register; whether it may stay is decided with the rest of the
// group's reading (readGroup).
func (m *Member) join(ctx context.Context) error {
	session := m.zk.ID()
	if session == 0 {
		return errNoSession
	}
	if m.registered != session {
		refused, err := m.admissible(ctx)
		if err != nil {
			return err
		}
		if refused != nil {
			m.outIn = session
			m.armWatches(ctx)
			return refused
		}
	}
	if err := m.register(ctx); err != nil {
		return err
	}
	m.outIn = 0
	return nil
}

// admissible reads the group's registrations and returns the error that
// keeps this member out, or nil if it may join.
func (m *Member) admissible(ctx context.Context) (*StrategyError, error) {
	ids, err := m.zk.Children(ctx, zkutil.ConsumerIDsPath(m.cfg.Group))
	if errors.Is(err, zksession.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list members of group %s: %w", m.cfg.Group, err)
	}
	slices.Sort(ids)
	members := make([]groupMember, len(ids))
	errs := make([]error, len(ids))
	forEach(len(ids), nil, func(i int) {
		members[i].id = ids[i]
		if ids[i] == m.cfg.ConsumerID {
			return
		}
		path := zkutil.ConsumerIDPath(m.cfg.Group, ids[i])
		data, st, err := m.zk.Get(ctx, path)
		if err != nil {
			errs[i] = err
			return
		}
		reg, err := zkutil.DecodeRegistration(path, data)
		if err != nil {
			errs[i] = err
			return
		}
		members[i].strategy, members[i].czxid = reg.AssignmentStrategy, st.Czxid
	})
	var group []groupMember
	for i, g := range members {
		switch err := errs[i]; {
		case g.id == m.cfg.ConsumerID:
			// A node of ours from an earlier session: register waits it out.
		case errors.Is(err, zksession.ErrNoNode), errors.As(err, new(*zkutil.DecodeError)):
			// Gone, or unreadable: readGroup reports those.
		case err != nil:
			return nil, fmt.Errorf("read member %s: %w", zkutil.ConsumerIDPath(m.cfg.Group, g.id), err)
		default:
			group = append(group, g)
		}
	}
	group = append(group, groupMember{id: m.cfg.ConsumerID, strategy: m.cfg.Assignor.Name(), czxid: youngest})
	return admit(m.cfg.Group, group)[m.cfg.ConsumerID], nil
}

// stepOut takes the member out of its group, which it may not share (see
// admit): its generation ends in an orderly way (the handler commits), its
// owner nodes and its registration are deleted, and it keeps watching the
// membership in the same session.
func (m *Member) stepOut(ctx context.Context) error {
	err := m.endGeneration(ctx, ErrGenerationEnded, true)
	err = errors.Join(err, m.releaseStale(ctx), m.deregister(ctx))
	if m.registered != 0 {
		m.outIn = m.registered
	}
	m.registered = 0
	m.sticky = stickyFollow{version: -1}
	m.armWatches(ctx)
	return err
}

// readAndAssign reads the group, reports what it must about it, and
// computes the assignment: with the assignor for range and roundrobin,
// through the group's sticky_assignment node for sticky (agreeSticky). It
// returns a *StrategyError if the member may not stay in the group.
func (m *Member) readAndAssign(ctx context.Context) (zkassign.AssignmentContext, zkassign.Assignment, error) {
	name := m.cfg.Assignor.Name()
	for attempt := 1; ; attempt++ {
		var cversion int32
		if name == strategyname.Sticky {
			// Read before the children, the Cversion is never newer than
			// the listing: a member never takes its view for newer than
			// it is (see agreeSticky).
			_, st, err := m.zk.Exists(ctx, zkutil.ConsumerIDsPath(m.cfg.Group))
			if err != nil {
				return zkassign.AssignmentContext{}, nil, fmt.Errorf("read %s: %w", zkutil.ConsumerIDsPath(m.cfg.Group), err)
			}
			cversion = st.Cversion
		}
		view, err := readGroup(ctx, m.regs.reader(m.zk), m.cfg.Group, m.cfg.ConsumerID, m.cfg.Subscription, m.cfg.ExcludeInternalTopics, name)
		if err != nil {
			return zkassign.AssignmentContext{}, nil, err
		}
		if view.refused != nil {
			return zkassign.AssignmentContext{}, nil, view.refused
		}
		for _, b := range view.broken {
			if !m.reported[b.Error()] {
				m.reported[b.Error()] = true
				m.log.Warn("ignoring unreadable group data", "err", b)
				m.report(b)
			}
		}
		m.reportExcluded(view.excluded)
		m.reportMissingTopics(view.ctx)
		m.watchTopics(ctx, m.topicsToWatch(view.ctx))
		if name != strategyname.Sticky {
			a, err := m.cfg.Assignor.Assign(view.ctx)
			return view.ctx, a, err
		}
		a, err := m.agreeSticky(ctx, view.ctx, cversion)
		if errors.Is(err, errStaleView) && attempt < 3 {
			continue
		}
		return view.ctx, a, err
	}
}

// reportExcluded reports each member left out of the group (see admit)
// once while it stays out.
func (m *Member) reportExcluded(excluded map[string]*StrategyError) {
	next := make(map[string]string, len(excluded))
	for id, e := range excluded {
		msg := e.Error()
		next[id] = msg
		if m.leftOut[id] != msg {
			m.log.Warn("a member of the group is left out: it runs another partition.assignment.strategy", "member", id, "err", e)
			m.report(e)
		}
	}
	m.leftOut = next
}
