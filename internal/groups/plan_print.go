package groups

import (
	"bytes"
	"fmt"
	"io"
)

// planRowFormat is the column layout of Kafka's reset-offsets table.
const planRowFormat = "%-30s %-30s %-10s %-15s"

// PrintPlan prints plan for group as kafka-consumer-groups.sh --reset-offsets
// prints its result (with --dry-run or --execute): a blank line, the header
// GROUP TOPIC PARTITION NEW-OFFSET, one row per partition in plan order, each
// column left-aligned and padded (30, 30, 10 and 15 wide), then a newline.
// An empty plan prints just the newline, like Kafka. This is the layout of
// Kafka 4.0; Kafka 3.9 prints the same header and rows but runs them together
// on one line.
//
// Kafka logs its clamping warnings separately; PrintPlan prints the plan's
// notes below the table instead, after a blank line, one
// "Warn: topic-partition: note" line each (see Notes to print them
// elsewhere, e.g. to stderr, and PrintTable for the table alone).
func PrintPlan(w io.Writer, group string, plan []PlannedOffset) error {
	var buf bytes.Buffer
	writeTable(&buf, group, plan)
	if notes := Notes(plan); len(notes) > 0 {
		buf.WriteString("\n")
		for _, n := range notes {
			buf.WriteString("Warn: " + n + "\n")
		}
	}
	return write(w, buf.Bytes())
}

// PrintTable prints the table of PrintPlan without the notes.
func PrintTable(w io.Writer, group string, plan []PlannedOffset) error {
	var buf bytes.Buffer
	writeTable(&buf, group, plan)
	return write(w, buf.Bytes())
}

// Notes returns the notes of plan, each prefixed with its partition as
// "topic-partition: ", in plan order.
func Notes(plan []PlannedOffset) []string {
	var notes []string
	for _, p := range plan {
		if p.Note != "" {
			notes = append(notes, p.TopicPartition.String()+": "+p.Note)
		}
	}
	return notes
}

func writeTable(buf *bytes.Buffer, group string, plan []PlannedOffset) {
	if len(plan) > 0 {
		buf.WriteString("\n")
		fmt.Fprintf(buf, planRowFormat, "GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
	}
	for _, p := range plan {
		buf.WriteString("\n")
		fmt.Fprintf(buf, planRowFormat, group, p.Topic, fmt.Sprint(p.Partition), fmt.Sprint(p.Target))
	}
	buf.WriteString("\n")
}

func write(w io.Writer, b []byte) error {
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("printing plan: %w", err)
	}
	return nil
}
