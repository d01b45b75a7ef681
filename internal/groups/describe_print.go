package groups

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"
)

// missing is what a column shows when there is no value (Kafka's
// MISSING_COLUMN_VALUE).
const missing = "-"

// offsetsRowFormat is the layout of Kafka 1.1.1's --describe rows for
// ZooKeeper groups: fixed-width columns, the last one padded too.
const offsetsRowFormat = "%-30s %-10s %-15s %-15s %-10s %-50s\n"

// PrintOffsets writes d the way Kafka 1.1.1's
// kafka-consumer-groups.sh --zookeeper --describe does: an empty line, the
// header TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID, one
// row per partition, then one row per topic of each member that owns no
// partition, with "-" in every column but CONSUMER-ID.
func PrintOffsets(w io.Writer, d *Description) error {
	ew := &errWriter{w: w}
	ew.printf("\n"+offsetsRowFormat, "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID")
	for _, r := range d.Rows {
		cur, end, lag, owner := missing, missing, missing, missing
		if r.HasCurrent {
			cur = strconv.FormatInt(r.Current, 10)
		}
		if r.HasLogEnd {
			end = strconv.FormatInt(r.LogEnd, 10)
		}
		if l, ok := r.Lag(); ok {
			lag = strconv.FormatInt(l, 10)
		}
		if r.Owner != "" {
			owner = r.Owner
		}
		ew.printf(offsetsRowFormat, r.Topic, strconv.Itoa(int(r.Partition)), cur, end, lag, owner)
	}
	for _, m := range d.IdleMembers() {
		keys := slices.Sorted(maps.Keys(m.Registration.Subscription))
		if len(keys) == 0 {
			keys = []string{missing}
		}
		for range keys {
			ew.printf(offsetsRowFormat, missing, missing, missing, missing, missing, m.ID)
		}
	}
	return ew.err
}

// PrintMembers writes one line per registered member: CONSUMER-ID, HOST
// (from a generated consumer id), #PARTITIONS owned, STREAMS
// ("topic:count,..."), PATTERN (static, white_list, black_list) and
// REGISTERED (when its node was created, UTC, RFC 3339).
func PrintMembers(w io.Writer, d *Description) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	ew := &errWriter{w: tw}
	ew.printf("\nCONSUMER-ID\tHOST\t#PARTITIONS\tSTREAMS\tPATTERN\tREGISTERED\n")
	for _, m := range d.Members {
		host, pattern := m.Host, m.Registration.Pattern
		if host == "" {
			host = missing
		}
		if m.Err != nil {
			pattern = "unreadable"
		}
		ew.printf("%s\t%s\t%d\t%s\t%s\t%s\n", m.ID, host, d.Owned[m.ID], m.StreamsString(), pattern,
			m.Registered.UTC().Format(time.RFC3339))
	}
	if ew.err != nil {
		return ew.err
	}
	return tw.Flush()
}

// PrintState writes GROUP, STATE, #MEMBERS, #PARTITIONS and #OWNED (the
// partitions owned by a registered member).
func PrintState(w io.Writer, d *Description) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	ew := &errWriter{w: tw}
	owned := 0
	registered := map[string]bool{}
	for _, m := range d.Members {
		registered[m.ID] = true
	}
	for _, r := range d.Rows {
		if registered[r.Owner] {
			owned++
		}
	}
	ew.printf("\nGROUP\tSTATE\t#MEMBERS\t#PARTITIONS\t#OWNED\n")
	ew.printf("%s\t%s\t%d\t%d\t%d\n", d.Group, d.State, len(d.Members), len(d.Rows), owned)
	if ew.err != nil {
		return ew.err
	}
	return tw.Flush()
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
