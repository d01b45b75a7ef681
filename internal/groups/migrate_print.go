package groups

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// PrintMigration writes the migration table: per partition the ZooKeeper
// offset, the Kafka offset (before the migration in a dry run, read back
// after it otherwise), the log-end offset and what the migration does, then
// the notes.
func PrintMigration(w io.Writer, group string, rows []MigrateRow, executed bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tTOPIC\tPARTITION\tZOOKEEPER-OFFSET\tKAFKA-OFFSET\tLOG-END-OFFSET\tACTION")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", group, r.Topic, r.Partition, r.ZooKeeper, dash(r.Kafka), dash(r.LogEnd), r.Action.describe(r.Target, executed))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Note != "" {
			if _, err := fmt.Fprintf(w, "Note: %s-%d: %s\n", r.Topic, r.Partition, r.Note); err != nil {
				return err
			}
		}
	}
	return nil
}

func dash(off int64) string {
	if off < 0 {
		return "-"
	}
	return strconv.FormatInt(off, 10)
}

func (a MigrateAction) describe(target int64, executed bool) string {
	switch a {
	case MigrateWrite:
		if executed {
			return "written"
		}
		return "write " + strconv.FormatInt(target, 10)
	case MigrateKeepKafka:
		return "keep Kafka's"
	default:
		return "unchanged"
	}
}
