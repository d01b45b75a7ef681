package groups

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"
)

// missing is what a column shows when there is no value (Kafka's
// MISSING_COLUMN_VALUE).
const missing = "-"

// minColumnWidth is the narrowest the TOPIC and CONSUMER-ID columns get.
const minColumnWidth = 15

// PrintOffsets writes d the way Kafka 1.1.1's
// kafka-consumer-groups.sh --zookeeper --describe does, byte for byte: an
// empty line, the header TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG
// CONSUMER-ID, one row per partition, then one row per topic of each member
// that owns no partition, with "-" in every column but CONSUMER-ID. TOPIC
// and CONSUMER-ID are as wide as their longest value (at least 15), the
// other columns have Kafka's fixed widths, and every line ends with a
// space.
func PrintOffsets(w io.Writer, d *Description) error {
	var rows [][6]string
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
		rows = append(rows, [6]string{r.Topic, strconv.Itoa(int(r.Partition)), cur, end, lag, owner})
	}
	for _, m := range d.IdleMembers() {
		n := len(m.Registration.Subscription)
		if n == 0 {
			n = 1
		}
		for range n {
			rows = append(rows, [6]string{missing, missing, missing, missing, missing, m.ID})
		}
	}
	topicWidth, idWidth := minColumnWidth, minColumnWidth
	for _, r := range rows {
		topicWidth = max(topicWidth, len(r[0]))
		idWidth = max(idWidth, len(r[5]))
	}
	format := fmt.Sprintf("%%-%ds %%-10s %%-15s %%-15s %%-15s %%-%ds \n", topicWidth, idWidth)
	ew := &errWriter{w: w}
	ew.printf("\n"+format, "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID")
	for _, r := range rows {
		ew.printf(format, r[0], r[1], r[2], r[3], r[4], r[5])
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
