package groups

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/zkconsumer/zkconsumer/zkutil"
	"unicode"
	"unicode/utf8"
)

// Errors reported for the entries of offsets files. A malformed line is
// reported as a [*LineError] wrapping one of them.
var (
	// ErrFieldCount: a CSV line has neither 3 nor 4 fields, or not as many as
	// the first line of the file.
	ErrFieldCount = errors.New("wrong number of fields")
	// ErrSyntax: a line that is not valid CSV (for example an unbalanced
	// double quote).
	ErrSyntax = errors.New("malformed CSV")
	// ErrInvalidTopic: a topic name Kafka would not accept (empty, longer
	// than 249 characters, "." or "..", or characters outside [a-zA-Z0-9._-]).
	ErrInvalidTopic = errors.New("invalid topic name")
	// ErrInvalidGroup: an empty group id, or one holding control characters,
	// invalid UTF-8 or (in ZooKeeper paths) a '/'.
	ErrInvalidGroup = errors.New("invalid group id")
	// ErrInvalidPartition: a partition that is not a decimal int32 >= 0.
	ErrInvalidPartition = errors.New("invalid partition")
	// ErrInvalidOffset: an offset that is not a decimal int64.
	ErrInvalidOffset = errors.New("invalid offset")
	// ErrNegativeOffset: an offset below zero, in a file or a reset spec.
	ErrNegativeOffset = errors.New("negative offset")
	// ErrDuplicate: the same group, topic and partition given twice.
	ErrDuplicate = errors.New("duplicate partition")
	// ErrLineTooLong: a line longer than [MaxLineLength].
	ErrLineTooLong = errors.New("line too long")
	// ErrMixedGroups: WriteCSV was given entries with and without a group.
	ErrMixedGroups = errors.New("entries with and without a group")
)

// MaxLineLength is the longest line the readers accept, in bytes.
const MaxLineLength = 64 << 10

// maxReportedLines caps how many malformed lines one read reports.
const maxReportedLines = 20

// maxTopicLength is Kafka's limit on topic names.
const maxTopicLength = 249

// TopicPartition names one partition; it is zkutil's, so that offsets
// read here pass unchanged to the connector's packages and the coordinator.
type TopicPartition = zkutil.TopicPartition

// compareTP orders by topic, then partition.
func compareTP(a, b TopicPartition) int {
	return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// PartitionOffset is one line of an offsets file.
type PartitionOffset struct {
	// Group is the consumer group; empty in the single-group CSV form,
	// where the group comes from --group.
	Group string
	TopicPartition
	// Offset is the offset to commit, the next message to consume.
	Offset int64
}

func comparePO(a, b PartitionOffset) int {
	return cmp.Or(strings.Compare(a.Group, b.Group), compareTP(a.TopicPartition, b.TopicPartition))
}

// LineError reports a malformed line of an offsets file.
type LineError struct {
	// Line is the 1-based line number.
	Line int
	// Text is the line as read, without its line terminator.
	Text string
	// Err is the cause, usually one of this package's sentinels.
	Err error
}

// Error implements error.
func (e *LineError) Error() string {
	return fmt.Sprintf("line %d: %v: %q", e.Line, e.Err, e.Text)
}

// Unwrap returns the cause.
func (e *LineError) Unwrap() error { return e.Err }

// ReadCSV reads the CSV of kafka-consumer-groups.sh --reset-offsets
// (--export writes it, --from-file reads it): one partition per line,
// either topic,partition,offset (Group left empty) or
// group,topic,partition,offset. The first line decides which; every line must
// then have that many fields.
//
// As in Kafka, lines are split at '\n' (a trailing '\r' is dropped) and fields
// may be double-quoted. Blank lines are skipped, as is a UTF-8 byte order
// mark. Unlike Kafka, which lets a later line silently override an earlier
// one and sends negative offsets to its range check, ReadCSV rejects
// duplicates and negative offsets, and it checks topic names.
//
// On malformed input ReadCSV returns no entries and an error joining a
// [*LineError] for each bad line (at most 20 are listed); errors.As finds the
// first.
func ReadCSV(r io.Reader) ([]PartitionOffset, error) {
	fields := 0 // of the first good line; every line must have as many
	return readOffsetLines(r, func(line string) (PartitionOffset, error) {
		po, nf, err := parseCSVLine(line, fields)
		if err == nil && fields == 0 {
			fields = nf
		}
		return po, err
	})
}

// readOffsetLines parses each non-blank line of r with parse, rejects
// entries that name a partition twice, and returns every entry, or none and
// an error joining a [*LineError] for each bad line (at most
// maxReportedLines are listed).
func readOffsetLines(r io.Reader, parse func(line string) (PartitionOffset, error)) ([]PartitionOffset, error) {
	var (
		out  []PartitionOffset
		errs []error
		bad  int
		seen = map[PartitionOffset]int{} // key with Offset 0 -> line
	)
	err := eachLine(r, func(n int, line string) {
		po, err := parse(line)
		if err == nil {
			key := po
			key.Offset = 0
			if first, dup := seen[key]; dup {
				err = fmt.Errorf("%w: %s already on line %d", ErrDuplicate, describe(po), first)
			} else {
				seen[key] = n
			}
		}
		if err != nil {
			bad++
			if bad <= maxReportedLines {
				errs = append(errs, &LineError{Line: n, Text: line, Err: err})
			}
			return
		}
		out = append(out, po)
	})
	if err != nil {
		errs = append(errs, err)
	}
	if bad > maxReportedLines {
		errs = append(errs, fmt.Errorf("%d more malformed lines", bad-maxReportedLines))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// describe names an entry in error messages.
func describe(po PartitionOffset) string {
	if po.Group == "" {
		return po.TopicPartition.String()
	}
	return fmt.Sprintf("group %q %s", po.Group, po.TopicPartition)
}

// parseCSVLine parses one non-blank line; want is the field count required
// (0: 3 or 4).
func parseCSVLine(line string, want int) (PartitionOffset, int, error) {
	cr := csv.NewReader(strings.NewReader(line))
	cr.FieldsPerRecord = -1
	rec, err := cr.Read()
	if err != nil {
		return PartitionOffset{}, 0, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	nf := len(rec)
	if len(rec) != 3 && len(rec) != 4 {
		return PartitionOffset{}, 0, fmt.Errorf("%w: %d fields, want topic,partition,offset or group,topic,partition,offset", ErrFieldCount, len(rec))
	}
	if want != 0 && len(rec) != want {
		return PartitionOffset{}, 0, fmt.Errorf("%w: %d fields, but the first line has %d", ErrFieldCount, len(rec), want)
	}
	var po PartitionOffset
	if len(rec) == 4 {
		po.Group = rec[0]
		if err := checkGroup(po.Group, false); err != nil {
			return PartitionOffset{}, 0, err
		}
		rec = rec[1:]
	}
	po.Topic = rec[0]
	if err := checkTopic(po.Topic); err != nil {
		return PartitionOffset{}, 0, err
	}
	if po.Partition, err = parsePartition(strings.TrimSpace(rec[1])); err != nil {
		return PartitionOffset{}, 0, err
	}
	if po.Offset, err = parseOffset(strings.TrimSpace(rec[2])); err != nil {
		return PartitionOffset{}, 0, err
	}
	return po, nf, nil
}

// eachLine calls fn with each non-blank line of r and its 1-based number.
func eachLine(r io.Reader, fn func(n int, line string)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLineLength)
	n := 0
	for sc.Scan() {
		n++
		b := sc.Bytes()
		if n == 1 {
			b = bytes.TrimPrefix(b, []byte("\uFEFF"))
		}
		line := strings.TrimSuffix(string(b), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		fn(n, line)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &LineError{Line: n + 1, Err: ErrLineTooLong}
		}
		return fmt.Errorf("reading offsets: %w", err)
	}
	return nil
}

func parsePartition(s string) (int32, error) {
	p, err := strconv.ParseInt(s, 10, 32)
	if err != nil || p < 0 {
		return 0, fmt.Errorf("%w: %q is not a partition number (0 or more)", ErrInvalidPartition, s)
	}
	return int32(p), nil
}

func parseOffset(s string) (int64, error) {
	o, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not a number", ErrInvalidOffset, s)
	}
	if o < 0 {
		return 0, fmt.Errorf("%w: %d", ErrNegativeOffset, o)
	}
	return o, nil
}

// checkTopic applies Kafka's rules for topic names.
func checkTopic(t string) error {
	if t == "" || t == "." || t == ".." || len(t) > maxTopicLength {
		return fmt.Errorf("%w: %q", ErrInvalidTopic, t)
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w: %q (legal characters are a-z, A-Z, 0-9, '.', '_' and '-')", ErrInvalidTopic, t)
		}
	}
	return nil
}

// checkGroup rejects group ids no file of ours can carry; inPath adds the
// restrictions of a ZooKeeper path segment.
func checkGroup(g string, inPath bool) error {
	if g == "" {
		return fmt.Errorf("%w: empty", ErrInvalidGroup)
	}
	if !utf8.ValidString(g) {
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalidGroup, g)
	}
	for _, r := range g {
		if unicode.IsControl(r) || r == '\uFEFF' {
			return fmt.Errorf("%w: %q holds a control character", ErrInvalidGroup, g)
		}
	}
	if inPath {
		if g == "." || g == ".." || strings.ContainsAny(g, "/:") {
			return fmt.Errorf("%w: %q cannot be a ZooKeeper path segment in an offsets file", ErrInvalidGroup, g)
		}
	}
	return nil
}

// checkEntries validates entries for writing and returns them sorted by
// group, topic, partition.
func checkEntries(offs []PartitionOffset, inPath bool) ([]PartitionOffset, error) {
	sorted := slices.Clone(offs)
	slices.SortFunc(sorted, comparePO)
	for i, po := range sorted {
		if po.Group != "" || inPath {
			if err := checkGroup(po.Group, inPath); err != nil {
				return nil, err
			}
		}
		if err := checkTopic(po.Topic); err != nil {
			return nil, err
		}
		if po.Partition < 0 {
			return nil, fmt.Errorf("%w: %s", ErrInvalidPartition, po.TopicPartition)
		}
		if po.Offset < 0 {
			return nil, fmt.Errorf("%w: %d for %s", ErrNegativeOffset, po.Offset, describe(po))
		}
		if i > 0 && comparePO(sorted[i-1], po) == 0 {
			return nil, fmt.Errorf("%w: %s", ErrDuplicate, describe(po))
		}
	}
	return sorted, nil
}

// WriteCSV writes offs as the CSV of kafka-consumer-groups.sh --export,
// sorted by group, topic and partition: topic,partition,offset when no entry
// has a Group (what Kafka writes for a single --group, and what its
// --from-file reads with one --group), group,topic,partition,offset when all
// have one (Kafka's form for several groups). Entries with and without a
// group cannot be mixed. Nothing is written if an entry is invalid (see
// ReadCSV) or duplicated. Fields are quoted only when CSV requires it;
// Kafka's writer also quotes names holding characters such as '-', which
// reads back the same.
func WriteCSV(w io.Writer, offs []PartitionOffset) error {
	sorted, err := checkEntries(offs, false)
	if err != nil {
		return err
	}
	withGroup := len(sorted) > 0 && sorted[len(sorted)-1].Group != ""
	if withGroup && sorted[0].Group == "" {
		return ErrMixedGroups
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	for _, po := range sorted {
		rec := []string{po.Topic, strconv.FormatInt(int64(po.Partition), 10), strconv.FormatInt(po.Offset, 10)}
		if withGroup {
			rec = append([]string{po.Group}, rec...)
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("writing CSV: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}
