package check

import (
	"math"
	"slices"
	"testing"
	"time"
)

var (
	t0    = time.Unix(1_700_000_000, 0).UTC()
	span  = 60 * time.Minute
	every = 15 * time.Second // scrape interval
)

// member are the labels of one zkconsumer member's series as Prometheus
// scrapes them.
var member = map[string]string{"group": "orders", "client_id": "orders", "job": "orders-app", "instance": "10.0.0.7:2112"}

func with(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// scenario is what a member exports over an hour: consumption that stops
// at stall (never if zero), a leader that stops answering at staleAt, and
// failures at given times. Producers write 100 messages a second
// throughout.
type scenario struct {
	stall, staleAt                          time.Duration
	rebalanceFailure, commitFailure, expiry time.Duration
	// lazy: the event series appear with their first event instead of
	// existing at zero from the start (what the Collector did before).
	lazy bool
}

func (sc scenario) store() *store {
	st := &store{}
	part := with(member, "topic", "orders", "partition", "0")
	stalled := func(d time.Duration) bool { return sc.stall > 0 && d >= sc.stall }
	st.add("zkconsumer_consumer_lag", part, t0, t0.Add(span), every, func(d time.Duration) float64 {
		if stalled(d) {
			return 40 + 100*(d-sc.stall).Seconds()
		}
		return 40 + 30*math.Sin(d.Seconds()/20)
	})
	st.add("zkconsumer_consumer_lag_seconds", part, t0, t0.Add(span), every, func(d time.Duration) float64 {
		if stalled(d) {
			return 0.4 + (d - sc.stall).Seconds()
		}
		return 0.4
	})
	st.add("zkconsumer_max_lag_seconds", member, t0, t0.Add(span), every, func(d time.Duration) float64 {
		if stalled(d) {
			return 0.4 + (d - sc.stall).Seconds()
		}
		return 0.4
	})
	st.add("zkconsumer_messages_consumed_total", with(member, "topic", "orders"), t0, t0.Add(span), every, func(d time.Duration) float64 {
		if stalled(d) {
			d = sc.stall
		}
		return 100 * d.Seconds()
	})
	st.add("zkconsumer_lag_refresh_interval_seconds", member, t0, t0.Add(span), every, func(time.Duration) float64 { return 10 })
	st.add("zkconsumer_high_watermark_age_seconds", part, t0, t0.Add(span), every, func(d time.Duration) float64 {
		if sc.staleAt > 0 && d >= sc.staleAt {
			return (d - sc.staleAt).Seconds() + 5
		}
		return math.Mod(d.Seconds(), 10) // read every 10 s
	})
	// A second partition, led by another broker, that stays healthy: the
	// alerts work per member over several partitions (vector matching
	// included).
	other := with(member, "topic", "orders", "partition", "1")
	st.add("zkconsumer_consumer_lag", other, t0, t0.Add(span), every, func(time.Duration) float64 { return 3 })
	st.add("zkconsumer_consumer_lag_seconds", other, t0, t0.Add(span), every, func(time.Duration) float64 { return 0.1 })
	st.add("zkconsumer_high_watermark_age_seconds", other, t0, t0.Add(span), every, func(d time.Duration) float64 {
		return math.Mod(d.Seconds()+3, 10)
	})
	counter := func(name string, lbls map[string]string, at time.Duration) {
		st.add(name, lbls, t0, t0.Add(span), every, func(d time.Duration) float64 {
			switch {
			case at > 0 && d >= at:
				return 1
			case sc.lazy:
				return math.NaN() // no series before the first event
			}
			return 0
		})
	}
	counter("zkconsumer_rebalances_total", with(member, "outcome", "failure"), sc.rebalanceFailure)
	counter("zkconsumer_commits_total", with(member, "outcome", "failure", "store", "zookeeper"), sc.commitFailure)
	counter("zkconsumer_zookeeper_expirations_total", member, sc.expiry)
	return st
}

// fired evaluates every alert of alerts.yml on st every 30 s, as
// Prometheus's rule manager does (pending while its expression returns
// something, firing once that lasted `for`), and returns the time each one
// first fired.
func fired(t *testing.T, st *store) map[string]time.Duration {
	t.Helper()
	out := map[string]time.Duration{}
	for _, g := range loadRules(t, alertsFile).Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			activeSince := map[string]time.Time{}
			for ts := t0; !ts.After(t0.Add(span)); ts = ts.Add(30 * time.Second) {
				now := map[string]bool{}
				for _, s := range st.eval(t, r.Expr, ts) {
					key := s.labels.String()
					now[key] = true
					if _, ok := activeSince[key]; !ok {
						activeSince[key] = ts
					}
					if _, done := out[r.Alert]; !done && ts.Sub(activeSince[key]) >= time.Duration(r.For) {
						out[r.Alert] = ts.Sub(t0)
					}
				}
				for key := range activeSince {
					if !now[key] {
						delete(activeSince, key)
					}
				}
			}
		}
	}
	return out
}

func alertNames(t *testing.T) []string {
	var names []string
	for _, g := range loadRules(t, alertsFile).Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				names = append(names, r.Alert)
			}
		}
	}
	return names
}

// Each alert fires on the failure it is for, within its window, and no
// other alert does; on a healthy member none fires.
func TestAlertsFire(t *testing.T) {
	for _, tc := range []struct {
		name string
		sc   scenario
		// want: alert -> earliest and latest time it may first fire.
		want map[string][2]time.Duration
	}{
		{"healthy", scenario{}, nil},
		{"application stalls at 20 min", scenario{stall: 20 * time.Minute}, map[string][2]time.Duration{
			// deriv over 10 min turns positive at once, then 15 min.
			"ZkconsumerLagGrowing": {34 * time.Minute, 40 * time.Minute},
			// Ten minutes old at 30 min, then 5 min.
			"ZkconsumerLagTooOld": {35 * time.Minute, 36 * time.Minute},
			// No message for 10 min at 30 min, then 10 min.
			"ZkconsumerStuck": {40 * time.Minute, 41 * time.Minute},
		}},
		{"leader stops answering at 20 min", scenario{staleAt: 20 * time.Minute}, map[string][2]time.Duration{
			// Older than three intervals (30 s) at 20m25s, then 2 min.
			"ZkconsumerLagStale": {22 * time.Minute, 23 * time.Minute},
		}},
		{"failures", scenario{rebalanceFailure: 20 * time.Minute, commitFailure: 30 * time.Minute, expiry: 40 * time.Minute}, map[string][2]time.Duration{
			"ZkconsumerRebalanceFailed": {20 * time.Minute, 21 * time.Minute},
			"ZkconsumerCommitsFailing":  {30 * time.Minute, 31 * time.Minute},
			"ZkconsumerSessionExpired":  {40 * time.Minute, 41 * time.Minute},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fired(t, tc.sc.store())
			for _, name := range alertNames(t) {
				at, ok := got[name]
				w, want := tc.want[name]
				switch {
				case want && !ok:
					t.Errorf("%s did not fire", name)
				case !want && ok:
					t.Errorf("%s fired at %v", name, at)
				case want && (at < w[0] || at > w[1]):
					t.Errorf("%s fired at %v, want between %v and %v", name, at, w[0], w[1])
				}
			}
			for name := range tc.want {
				if !slices.Contains(alertNames(t), name) {
					t.Errorf("no alert %s in %s", name, alertsFile)
				}
			}
		})
	}
}

// Why the Collector creates its failure series at zero: a counter that
// appears with its first event (at 1) has no earlier sample for increase()
// to compare with, and the alert on the first failure never fires.
func TestAlertsMissFailuresOfLazySeries(t *testing.T) {
	got := fired(t, scenario{lazy: true, rebalanceFailure: 20 * time.Minute, commitFailure: 30 * time.Minute, expiry: 40 * time.Minute}.store())
	for _, name := range []string{"ZkconsumerRebalanceFailed", "ZkconsumerCommitsFailing", "ZkconsumerSessionExpired"} {
		if at, ok := got[name]; ok {
			t.Errorf("%s fired at %v on a series born at its first event; the premise of this test is wrong", name, at)
		}
	}
}

// The aliases have the names and labels of the exporters they stand in
// for, and count a partition reported by two members (during a rebalance)
// once.
func TestAliases(t *testing.T) {
	st := &store{}
	at := t0.Add(10 * time.Minute)
	other := with(member, "client_id", "orders-2", "instance", "10.0.0.8:2112")
	lag := func(lbls map[string]string, partition string, v float64) {
		st.add("zkconsumer_consumer_lag", with(lbls, "topic", "orders", "partition", partition), t0, at, every, func(time.Duration) float64 { return v })
		st.add("zkconsumer_consumed_offset", with(lbls, "topic", "orders", "partition", partition), t0, at, every, func(time.Duration) float64 { return 1000 - v })
		st.add("zkconsumer_high_watermark", with(lbls, "topic", "orders", "partition", partition), t0, at, every, func(time.Duration) float64 { return 1000 })
		st.add("zkconsumer_consumer_lag_seconds", with(lbls, "topic", "orders", "partition", partition), t0, at, every, func(time.Duration) float64 { return v / 10 })
	}
	lag(member, "0", 30)
	lag(other, "0", 25) // the previous owner, until its next scrape
	lag(other, "1", 70)
	st.add("zkconsumer_messages_consumed_total", with(member, "topic", "orders"), t0, at, every, func(d time.Duration) float64 { return d.Seconds() })
	st.add("zkconsumer_owned_partitions", member, t0, at, every, func(time.Duration) float64 { return 1 })

	// Recording rules run in order within a group: each result is stored
	// for the rules after it.
	recorded := map[string][]sampleOut{}
	for _, g := range loadRules(t, recordingFile).Groups {
		for _, r := range g.Rules {
			out := st.eval(t, r.Expr, at)
			recorded[r.Record] = out
			for _, s := range out {
				m := s.labels.Map()
				v := s.value
				st.add(r.Record, m, at, at, time.Second, func(time.Duration) float64 { return v })
			}
		}
	}
	check := func(name string, want map[string]float64) {
		t.Helper()
		got := map[string]float64{}
		for _, s := range recorded[name] {
			got[s.labels.String()] = s.value
		}
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", name, got, want)
			return
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-9 {
				t.Errorf("%s%s: %v, want %v (all: %v)", name, k, g, v, got)
			}
		}
	}
	check("kafka_consumergroup_group_lag", map[string]float64{
		`{group="orders", partition="0", topic="orders"}`: 30,
		`{group="orders", partition="1", topic="orders"}`: 70,
	})
	check("kafka_consumergroup_group_lag_seconds", map[string]float64{
		`{group="orders", partition="0", topic="orders"}`: 3,
		`{group="orders", partition="1", topic="orders"}`: 7,
	})
	check("kafka_consumergroup_group_max_lag", map[string]float64{`{group="orders"}`: 70})
	check("kafka_consumergroup_group_max_lag_seconds", map[string]float64{`{group="orders"}`: 7})
	check("kafka_consumergroup_group_sum_lag", map[string]float64{`{group="orders"}`: 100})
	check("kafka_consumergroup_group_topic_sum_lag", map[string]float64{`{group="orders", topic="orders"}`: 100})
	check("kafka_consumergroup_group_offset", map[string]float64{
		`{group="orders", partition="0", topic="orders"}`: 975,
		`{group="orders", partition="1", topic="orders"}`: 930,
	})
	check("kafka_partition_latest_offset", map[string]float64{
		`{partition="0", topic="orders"}`: 1000,
		`{partition="1", topic="orders"}`: 1000,
	})
	check("kafka_consumergroup_lag", map[string]float64{
		`{consumergroup="orders", partition="0", topic="orders"}`: 30,
		`{consumergroup="orders", partition="1", topic="orders"}`: 70,
	})
	check("kafka_consumergroup_lag_sum", map[string]float64{`{consumergroup="orders", topic="orders"}`: 100})
	check("kafka_consumergroup_current_offset", map[string]float64{
		`{consumergroup="orders", partition="0", topic="orders"}`: 975,
		`{consumergroup="orders", partition="1", topic="orders"}`: 930,
	})
	check("kafka_topic_partition_current_offset", map[string]float64{
		`{partition="0", topic="orders"}`: 1000,
		`{partition="1", topic="orders"}`: 1000,
	})
	check("kminion_kafka_consumer_group_topic_partition_lag", map[string]float64{
		`{group_id="orders", partition_id="0", topic_name="orders"}`: 30,
		`{group_id="orders", partition_id="1", topic_name="orders"}`: 70,
	})
	check("kminion_kafka_consumer_group_topic_lag", map[string]float64{`{group_id="orders", topic_name="orders"}`: 100})
	check("group:zkconsumer_consumer_lag:sum", map[string]float64{`{group="orders"}`: 100})
	check("group_topic:zkconsumer_consumer_lag:sum", map[string]float64{`{group="orders", topic="orders"}`: 100})
	check("group:zkconsumer_consumer_lag_seconds:max", map[string]float64{`{group="orders"}`: 7})
	check("group:zkconsumer_owned_partitions:sum", map[string]float64{`{group="orders"}`: 1})
	check("group_topic:zkconsumer_messages_consumed:rate5m", map[string]float64{`{group="orders", topic="orders"}`: 1})

	// Every recording rule was checked above.
	for name := range recorded {
		if !slices.Contains(checkedAliases, name) {
			t.Errorf("recording rule %s has no expectation in TestAliases", name)
		}
	}
}

var checkedAliases = []string{
	"kafka_consumergroup_group_lag", "kafka_consumergroup_group_lag_seconds",
	"kafka_consumergroup_group_max_lag", "kafka_consumergroup_group_max_lag_seconds",
	"kafka_consumergroup_group_sum_lag", "kafka_consumergroup_group_topic_sum_lag",
	"kafka_consumergroup_group_offset", "kafka_partition_latest_offset",
	"kafka_consumergroup_lag", "kafka_consumergroup_lag_sum",
	"kafka_consumergroup_current_offset", "kafka_topic_partition_current_offset",
	"kminion_kafka_consumer_group_topic_partition_lag", "kminion_kafka_consumer_group_topic_lag",
	"group:zkconsumer_consumer_lag:sum", "group_topic:zkconsumer_consumer_lag:sum",
	"group:zkconsumer_consumer_lag_seconds:max", "group:zkconsumer_owned_partitions:sum",
	"group_topic:zkconsumer_messages_consumed:rate5m",
}
