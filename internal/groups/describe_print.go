package groups

import (
	"fmt"
	"io"
	"strconv"
	"strings"
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
	return printOffsets(w, d, false)
}

// PrintOffsetsVerbose writes what PrintOffsets writes with two more
// columns (--describe --verbose): HOST, the host of the owning member's
// generated consumer id, and THREAD, the owner znode's value, the
// consumer thread (stream) that owns the partition.
func PrintOffsetsVerbose(w io.Writer, d *Description) error {
	return printOffsets(w, d, true)
}

func printOffsets(w io.Writer, d *Description, verbose bool) error {
	hosts := map[string]string{}
	for _, m := range d.Members {
		hosts[m.ID] = m.Host
	}
	orMissing := func(s string) string {
		if s == "" {
			return missing
		}
		return s
	}
	var rows [][8]string
	for _, r := range d.Rows {
		cur, end, lag := missing, missing, missing
		if r.HasCurrent {
			cur = strconv.FormatInt(r.Current, 10)
		}
		if r.HasLogEnd {
			end = strconv.FormatInt(r.LogEnd, 10)
		}
		if l, ok := r.Lag(); ok {
			lag = strconv.FormatInt(l, 10)
		}
		rows = append(rows, [8]string{r.Topic, strconv.Itoa(int(r.Partition)), cur, end, lag,
			orMissing(r.Owner), orMissing(hosts[r.Owner]), orMissing(r.OwnerThread)})
	}
	for _, m := range d.IdleMembers() {
		n := len(m.Registration.Subscription)
		if n == 0 {
			n = 1
		}
		for range n {
			rows = append(rows, [8]string{missing, missing, missing, missing, missing, m.ID, orMissing(m.Host), missing})
		}
	}
	topicWidth, idWidth, hostWidth := minColumnWidth, minColumnWidth, minColumnWidth
	for _, r := range rows {
		topicWidth = max(topicWidth, len(r[0]))
		idWidth = max(idWidth, len(r[5]))
		hostWidth = max(hostWidth, len(r[6]))
	}
	ew := &errWriter{w: w}
	if !verbose {
		format := fmt.Sprintf("%%-%ds %%-10s %%-15s %%-15s %%-15s %%-%ds \n", topicWidth, idWidth)
		ew.printf("\n"+format, "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID")
		for _, r := range rows {
			ew.printf(format, r[0], r[1], r[2], r[3], r[4], r[5])
		}
		return ew.err
	}
	format := fmt.Sprintf("%%-%ds %%-10s %%-15s %%-15s %%-15s %%-%ds %%-%ds %%s\n", topicWidth, idWidth, hostWidth)
	ew.printf("\n"+format, "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "THREAD")
	for _, r := range rows {
		ew.printf(format, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7])
	}
	return ew.err
}

// PrintMembers writes one line per registered member: CONSUMER-ID, HOST
// (from a generated consumer id), #PARTITIONS owned, STREAMS
// ("topic:count,..."), PATTERN (static, white_list, black_list) and
// REGISTERED (when its node was created, UTC, RFC 3339).
func PrintMembers(w io.Writer, d *Description) error {
	return printMembers(w, d, false)
}

// PrintMembersVerbose writes what PrintMembers writes with one more
// column (--describe --members --verbose), ASSIGNMENT: the partitions the
// member owns, by topic, as "orders(0,1), payments(2)", or "-".
func PrintMembersVerbose(w io.Writer, d *Description) error {
	return printMembers(w, d, true)
}

func printMembers(w io.Writer, d *Description, verbose bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	ew := &errWriter{w: tw}
	header := "\nCONSUMER-ID\tHOST\t#PARTITIONS\tSTREAMS\tPATTERN\tREGISTERED"
	if verbose {
		header += "\tASSIGNMENT"
	}
	ew.printf("%s\n", header)
	owned := d.assignments()
	for _, m := range d.Members {
		host, pattern := m.Host, m.Registration.Pattern
		if host == "" {
			host = missing
		}
		if m.Err != nil {
			pattern = "unreadable"
		}
		ew.printf("%s\t%s\t%d\t%s\t%s\t%s", m.ID, host, d.Owned[m.ID], m.StreamsString(), pattern,
			m.Registered.UTC().Format(time.RFC3339))
		if verbose {
			a := owned[m.ID]
			if a == "" {
				a = missing
			}
			ew.printf("\t%s", a)
		}
		ew.printf("\n")
	}
	if ew.err != nil {
		return ew.err
	}
	return tw.Flush()
}

// assignments returns, by consumer id, the partitions each owns in the
// form "topic(0,1), topic2(3)". Rows are sorted by topic and partition, so
// are topics and partitions here.
func (d *Description) assignments() map[string]string {
	var owners []string
	topics := map[string][]string{}           // owner -> its topics, in order
	parts := map[string]map[string][]string{} // owner -> topic -> partitions
	for _, r := range d.Rows {
		if r.Owner == "" {
			continue
		}
		if parts[r.Owner] == nil {
			owners = append(owners, r.Owner)
			parts[r.Owner] = map[string][]string{}
		}
		if _, ok := parts[r.Owner][r.Topic]; !ok {
			topics[r.Owner] = append(topics[r.Owner], r.Topic)
		}
		parts[r.Owner][r.Topic] = append(parts[r.Owner][r.Topic], strconv.Itoa(int(r.Partition)))
	}
	out := make(map[string]string, len(owners))
	for _, o := range owners {
		var each []string
		for _, t := range topics[o] {
			each = append(each, t+"("+strings.Join(parts[o][t], ",")+")")
		}
		out[o] = strings.Join(each, ", ")
	}
	return out
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

// Listing is one row of --list --state: a group and its state.
type Listing struct {
	Group, State string
}

// PrintListing writes the rows of --list --state in the shape of Kafka's
// kafka-consumer-groups.sh --list --state: a GROUP column as wide as the
// longest name (at least 15) plus 10, then STATE, 20 wide.
func PrintListing(w io.Writer, rows []Listing) error {
	width := minColumnWidth
	for _, r := range rows {
		width = max(width, len(r.Group))
	}
	format := fmt.Sprintf("%%-%ds %%-20s\n", width+10)
	ew := &errWriter{w: w}
	ew.printf(format, "GROUP", "STATE")
	for _, r := range rows {
		ew.printf(format, r.Group, r.State)
	}
	return ew.err
}
