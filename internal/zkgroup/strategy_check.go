package zkgroup

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
)

// ErrInconsistentStrategy is wrapped by the *StrategyError a member
// reports (MemberConfig.OnError) when it stays out of its group because
// the group runs another partition.assignment.strategy: Kafka's
// INCONSISTENT_GROUP_PROTOCOL, decided without a coordinator.
var ErrInconsistentStrategy = errors.New("inconsistent partition.assignment.strategy")

// MemberStrategy is a member of a group and the strategy its registration
// records ("" for none).
type MemberStrategy struct {
	// ID is the member's consumer id, Strategy the
	// partition.assignment.strategy its registration records.
	ID, Strategy string
}

// StrategyError says why a member stays out of its group (or, reported by
// a member that stays in, why another one is left out): members it cannot
// share the group with run other strategies.
//
// Every zkconsumer member records its strategy in its registration; Kafka's
// Scala consumer records none. Range and roundrobin members share a group
// with Scala members exactly as before; the sticky strategy shares a group
// with sticky members only. Who stays in is decided from the registrations
// alone, the same way by every member: a member that records no strategy
// cannot be told to leave, so it is always in and sticky members step out
// for it; otherwise the older registration wins (a sticky member that
// joins a range group stays out, and so does a range or roundrobin member
// that joins a sticky group, or a range member that joins a roundrobin
// one). A member that stays out owns nothing, deletes its registration (so
// that Scala members, which count every registration, do not assign it
// partitions), reports this error (wrapped in ErrRebalanceFailed), and
// watches the group: it joins once the members it conflicts with are gone.
type StrategyError struct {
	// Group is the group; Member the member left out and Strategy its
	// strategy.
	Group, Member, Strategy string
	// Conflicts are the members that keep it out, with their strategies.
	Conflicts []MemberStrategy
}

// Error names the members, their strategies and what to do.
func (e *StrategyError) Error() string {
	const shown = 5
	sticky := e.Strategy == strategyname.Sticky
	others := make([]string, 0, shown+1)
	for i, c := range e.Conflicts {
		sticky = sticky || c.Strategy == strategyname.Sticky
		if i < shown {
			others = append(others, fmt.Sprintf("%s (%s)", c.ID, describeStrategy(c.Strategy)))
		}
	}
	if n := len(e.Conflicts) - shown; n > 0 {
		others = append(others, fmt.Sprintf("and %d more", n))
	}
	hint := "set the same partition.assignment.strategy on every member of the group"
	if sticky {
		hint = "the sticky strategy needs every member of the group to be a zkconsumer running sticky: set the same partition.assignment.strategy on every member, or use another group.id"
	}
	return fmt.Sprintf("%s: member %s of group %s runs %s, which cannot share the group with %s; it owns nothing and stays out of the group until they leave (%s)",
		ErrInconsistentStrategy.Error(), e.Member, e.Group, describeStrategy(e.Strategy), strings.Join(others, ", "), hint)
}

// Unwrap returns ErrInconsistentStrategy.
func (e *StrategyError) Unwrap() error { return ErrInconsistentStrategy }

// describeStrategy names a recorded strategy for an error message.
func describeStrategy(s string) string {
	if s == "" {
		return "no recorded strategy: Kafka's Scala consumer or an older zkconsumer, running range or roundrobin"
	}
	return fmt.Sprintf("%q", s)
}

// compatibleStrategies reports whether members running a and b may share a
// group. "" is a member that records none, which runs range or roundrobin,
// never sticky. Range and roundrobin members that record their strategy
// refuse each other too: they would fight over partitions as well.
func compatibleStrategies(a, b string) bool {
	if a == "" || b == "" {
		return a != strategyname.Sticky && b != strategyname.Sticky
	}
	return a == b
}

// groupMember is a member as the strategy check sees it.
type groupMember struct {
	id       string
	strategy string
	czxid    int64 // the zxid that created its registration: its age
}

// youngest is the age of a member that has not registered yet.
const youngest = math.MaxInt64

// admit decides which members make up the group. Members that record no
// strategy come first, then the others oldest first (by the zxid that
// created their registration, then by id); a member is admitted when its
// strategy is compatible with that of every member admitted before it.
// excluded maps each member left out to its error. Every member reading
// the same registrations decides the same.
func admit(group string, members []groupMember) (excluded map[string]*StrategyError) {
	sorted := slices.Clone(members)
	slices.SortFunc(sorted, func(a, b groupMember) int {
		return cmp.Or(cmp.Compare(ageKey(a.strategy), ageKey(b.strategy)), cmp.Compare(a.czxid, b.czxid), cmp.Compare(a.id, b.id))
	})
	var admitted []groupMember
	// The strategies admitted so far, each once: a member is checked
	// against these, and against every admitted member only when one
	// conflicts, so a group that agrees costs a few comparisons a member
	// rather than one per pair of members.
	strategies := map[string]bool{}
	for _, m := range sorted {
		agrees := true
		for s := range strategies {
			if !compatibleStrategies(m.strategy, s) {
				agrees = false
				break
			}
		}
		if agrees {
			admitted = append(admitted, m)
			strategies[m.strategy] = true
			continue
		}
		var conflicts []MemberStrategy
		for _, a := range admitted {
			if !compatibleStrategies(m.strategy, a.strategy) {
				conflicts = append(conflicts, MemberStrategy{ID: a.id, Strategy: a.strategy})
			}
		}
		if len(conflicts) == 0 {
			admitted = append(admitted, m)
			continue
		}
		if excluded == nil {
			excluded = map[string]*StrategyError{}
		}
		excluded[m.id] = &StrategyError{Group: group, Member: m.id, Strategy: m.strategy, Conflicts: conflicts}
	}
	return excluded
}

// ageKey puts members that record no strategy before all others.
func ageKey(strategy string) int {
	if strategy == "" {
		return 0
	}
	return 1
}
