package groups

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Errors of the ExportZkOffsets format and of format detection.
var (
	// ErrBadPath: a line that is not /consumers/<group>/offsets/<topic>/<partition>:<offset>.
	ErrBadPath = errors.New("not an offsets line /consumers/<group>/offsets/<topic>/<partition>:<offset>")
	// ErrUnknownFormat: DetectFormat recognised neither format.
	ErrUnknownFormat = errors.New("unknown offsets file format")
)

// Format is the format of an offsets file.
type Format int

const (
	// FormatCSV is the CSV of kafka-consumer-groups.sh; see ReadCSV.
	FormatCSV Format = iota + 1
	// FormatZk is the format of Kafka's ExportZkOffsets and ImportZkOffsets;
	// see ReadZkOffsets.
	FormatZk
)

// String returns "csv" or "zk".
func (f Format) String() string {
	switch f {
	case FormatCSV:
		return "csv"
	case FormatZk:
		return "zk"
	default:
		return "Format(" + strconv.Itoa(int(f)) + ")"
	}
}

const zkConsumersPrefix = "/consumers/"

// ReadZkOffsets reads the file format of Kafka's kafka.tools.ExportZkOffsets
// and ImportZkOffsets: one line per partition,
//
//	/consumers/<group>/offsets/<topic>/<partition>:<offset>
//
// the ZooKeeper path of the offset node and its data. Each entry's Group
// comes from its path. Blank lines are skipped (ImportZkOffsets stops at the
// first one), a trailing '\r' is dropped, and a line must hold exactly one
// ':' (ImportZkOffsets splits at ':' and keeps the first two pieces). The
// path must have exactly that shape, with a valid group and topic, a
// partition number (not the 0.7-era broker-partition form) and an offset
// >= 0; duplicates are rejected.
//
// On malformed input ReadZkOffsets returns no entries and an error joining a
// [*LineError] for each bad line (at most 20 are listed).
func ReadZkOffsets(r io.Reader) ([]PartitionOffset, error) {
	return readOffsetLines(r, func(line string) (PartitionOffset, error) {
		return parseZkLine(strings.TrimSpace(line))
	})
}

func parseZkLine(line string) (PartitionOffset, error) {
	path, data, ok := strings.Cut(line, ":")
	if !ok {
		return PartitionOffset{}, fmt.Errorf("%w: no ':'", ErrBadPath)
	}
	if strings.Contains(data, ":") {
		return PartitionOffset{}, fmt.Errorf("%w: more than one ':'", ErrBadPath)
	}
	rest, ok := strings.CutPrefix(path, zkConsumersPrefix)
	if !ok {
		return PartitionOffset{}, fmt.Errorf("%w: path does not start with %s", ErrBadPath, zkConsumersPrefix)
	}
	seg := strings.Split(rest, "/")
	if len(seg) != 4 || seg[1] != "offsets" {
		return PartitionOffset{}, fmt.Errorf("%w: path %q", ErrBadPath, path)
	}
	var po PartitionOffset
	var err error
	po.Group = seg[0]
	if err = checkGroup(po.Group, true); err != nil {
		return PartitionOffset{}, err
	}
	po.Topic = seg[2]
	if err = checkTopic(po.Topic); err != nil {
		return PartitionOffset{}, err
	}
	if po.Partition, err = parsePartition(seg[3]); err != nil {
		return PartitionOffset{}, err
	}
	if po.Offset, err = parseOffset(data); err != nil {
		return PartitionOffset{}, err
	}
	return po, nil
}

// WriteZkOffsets writes offs in the ExportZkOffsets format, sorted by group,
// topic and partition, one "/consumers/<group>/offsets/<topic>/<partition>:<offset>\n"
// line each, which Kafka's ImportZkOffsets and ReadZkOffsets read back. Every
// entry needs a Group that can be a path segment and hold no ':' (Kafka's
// reader splits at ':'); nothing is written if an entry is invalid or
// duplicated.
func WriteZkOffsets(w io.Writer, offs []PartitionOffset) error {
	sorted, err := checkEntries(offs, true)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, po := range sorted {
		fmt.Fprintf(&buf, "%s%s/offsets/%s/%d:%d\n", zkConsumersPrefix, po.Group, po.Topic, po.Partition, po.Offset)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing offsets: %w", err)
	}
	return nil
}

// DetectFormat tells which format an offsets file is in from its beginning
// (first holds at least its first non-blank line; the whole file will do).
// The first line decides: if it is a valid CSV entry (see ReadCSV) the file
// is FormatCSV; otherwise a line starting with /consumers/ makes it FormatZk
// and one with a comma FormatCSV, so that the reader then reports what is
// wrong. (No line can be valid in both formats: an ExportZkOffsets line ends
// in /<partition>:<offset>, never in two numeric CSV fields.) A blank
// beginning is reported as FormatCSV: either reader finds no entries in it.
// Anything else is ErrUnknownFormat.
func DetectFormat(first []byte) (Format, error) {
	sc := bufio.NewScanner(bytes.NewReader(bytes.TrimPrefix(first, []byte("\uFEFF"))))
	sc.Buffer(nil, len(first)+1)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if _, _, err := parseCSVLine(line, 0); err == nil {
			return FormatCSV, nil
		}
		switch trimmed := strings.TrimSpace(line); {
		case strings.HasPrefix(trimmed, zkConsumersPrefix):
			return FormatZk, nil
		case strings.Contains(line, ","):
			return FormatCSV, nil
		default:
			return 0, fmt.Errorf("%w: first line %q is neither CSV (topic,partition,offset) nor %s<group>/offsets/<topic>/<partition>:<offset>",
				ErrUnknownFormat, truncate(trimmed, 80), zkConsumersPrefix)
		}
	}
	return FormatCSV, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
