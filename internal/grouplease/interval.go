package grouplease

import (
	"log/slog"
	"time"
)

// renewalsPerLease is how many heartbeats a member sends, at the least,
// in the time one renewal's lease lasts.
const renewalsPerLease = 3

// HeartbeatInterval returns how long a member of a generation whose lease
// term is term waits between heartbeats: configured (heartbeat.interval.ms,
// or the interval the coordinator gave), but never longer than a third of
// the lease a heartbeat gives (a quarter of term). Kafka accepts any
// heartbeat interval below the session timeout, while a lease lasts only
// Fraction of the term from when its heartbeat was sent: with the interval
// alone, a member whose heartbeats all succeed would let its lease lapse
// before each next heartbeat and stop handing out messages for that long.
// With it, a lease lapses between answered heartbeats only when a
// heartbeat takes longer than two thirds of the lease to be answered.
// Heartbeats more frequent than configured cost the coordinator little,
// and Kafka's coordinators accept them.
func HeartbeatInterval(configured, term time.Duration) time.Duration {
	bound := time.Duration(float64(term) * Fraction / renewalsPerLease)
	if bound <= 0 {
		return configured
	}
	return min(configured, bound)
}

// Gaps tracks the longest time between two answered heartbeats of a
// member (or from the start of its generation to the first answer): the
// time the coordinator did not hear from it, which must stay under the
// session timeout. A heartbeat loop owns it; it is not safe for
// concurrent use.
type Gaps struct {
	// Log receives, at WARN, every gap of half of Session or more: the
	// coordinator heard nothing from the member for that long, and could
	// have removed it had it lasted to the session timeout.
	Log     *slog.Logger
	Session time.Duration

	longest time.Duration
}

// Record records a heartbeat answered at to, the previous one having been
// answered at from.
func (g *Gaps) Record(from, to time.Time) {
	gap := to.Sub(from)
	g.longest = max(g.longest, gap)
	if gap >= g.Session/2 {
		g.Log.Warn("heartbeats went unanswered", "heartbeat_gap", gap.Round(time.Millisecond),
			"gap_from", from.UTC().Format(time.RFC3339Nano), "gap_until", to.UTC().Format(time.RFC3339Nano), "session_timeout", g.Session)
	}
}

// Longest returns the longest gap recorded, to the millisecond.
func (g *Gaps) Longest() time.Duration { return g.longest.Round(time.Millisecond) }
