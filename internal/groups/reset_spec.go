package groups

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Errors of reset specs and their arguments.
var (
	// ErrDatetime: a --to-datetime argument in none of Kafka's formats.
	ErrDatetime = errors.New("invalid datetime (want YYYY-MM-DDTHH:mm:SS.sss, optionally followed by Z, ±hh, ±hhmm or ±hh:mm)")
	// ErrDuration: a --by-duration argument that is not an ISO-8601 duration
	// PnDTnHnMn.nS, or is out of range.
	ErrDuration = errors.New("invalid ISO-8601 duration (want PnDTnHnMn.nS)")
	// ErrUnknownMode: a ResetSpec with a Mode that is not one of the Reset*
	// constants.
	ErrUnknownMode = errors.New("unknown reset mode")
)

// ResetMode is the scenario of --reset-offsets.
type ResetMode int

// The reset scenarios, named after kafka-consumer-groups.sh's options.
const (
	// ResetToEarliest (--to-earliest) resets to the log-start offset.
	ResetToEarliest ResetMode = iota + 1
	// ResetToLatest (--to-latest) resets to the log-end offset.
	ResetToLatest
	// ResetToCurrent (--to-current) keeps the committed offset; a partition
	// without one gets the log-end offset, as in Kafka.
	ResetToCurrent
	// ResetToOffset (--to-offset N) resets to ResetSpec.Offset, clamped into
	// the log.
	ResetToOffset
	// ResetShiftBy (--shift-by N) moves the committed offset by
	// ResetSpec.Shift, clamped into the log; a partition without a committed
	// offset is an error, as in Kafka.
	ResetShiftBy
	// ResetToDatetime (--to-datetime) resets to the first offset whose
	// timestamp is at or after ResetSpec.Time.
	ResetToDatetime
	// ResetByDuration (--by-duration) resets to the first offset whose
	// timestamp is at or after now minus ResetSpec.Duration.
	ResetByDuration
	// ResetFromFile (--from-file) resets the partitions in ResetSpec.File to
	// the offsets given there, clamped into the log.
	ResetFromFile
)

var resetModeNames = [...]string{
	ResetToEarliest: "to-earliest",
	ResetToLatest:   "to-latest",
	ResetToCurrent:  "to-current",
	ResetToOffset:   "to-offset",
	ResetShiftBy:    "shift-by",
	ResetToDatetime: "to-datetime",
	ResetByDuration: "by-duration",
	ResetFromFile:   "from-file",
}

// String returns the option name without dashes, e.g. "to-earliest".
func (m ResetMode) String() string {
	if m > 0 && int(m) < len(resetModeNames) {
		return resetModeNames[m]
	}
	return "ResetMode(" + strconv.Itoa(int(m)) + ")"
}

// ResetSpec says how --reset-offsets computes new offsets. Only the field
// that Mode names is used.
type ResetSpec struct {
	Mode ResetMode
	// Offset is the target of ResetToOffset; it must be >= 0.
	Offset int64
	// Shift is added to the committed offset by ResetShiftBy; it may be
	// negative.
	Shift int64
	// Time is the point in time of ResetToDatetime.
	Time time.Time
	// Duration is how far before now ResetByDuration goes; a negative one
	// points into the future, as Kafka allows.
	Duration time.Duration
	// File holds the offsets of ResetFromFile for the group being reset;
	// every offset must be >= 0.
	File map[TopicPartition]int64
}

// Validate checks what can be checked without the partitions.
func (s ResetSpec) Validate() error {
	switch s.Mode {
	case ResetToEarliest, ResetToLatest, ResetToCurrent, ResetShiftBy, ResetToDatetime, ResetByDuration:
		return nil
	case ResetToOffset:
		if s.Offset < 0 {
			return fmt.Errorf("%w: --to-offset %d", ErrNegativeOffset, s.Offset)
		}
		return nil
	case ResetFromFile:
		for tp, off := range s.File {
			if off < 0 {
				return fmt.Errorf("%w: %d for %s", ErrNegativeOffset, off, tp)
			}
		}
		return nil
	default:
		return fmt.Errorf("%w: %d", ErrUnknownMode, int(s.Mode))
	}
}

// datetimeRE matches what Kafka's Utils.getDateTime accepts: a date and a
// time with exactly three fraction digits, then an optional zone.
var datetimeRE = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})(Z|[+-]\d{2}(?::?\d{2})?)?$`)

// ParseDatetime parses the argument of --to-datetime as Kafka does:
// YYYY-MM-DDTHH:mm:SS.sss, in UTC unless followed by a zone, which may be
// Z, ±hh, ±hhmm or ±hh:mm (the forms Kafka's tests produce). The
// milliseconds are required, with exactly three digits; values out of range
// (month 13, hour 24, ...) are rejected. Kafka reads the minutes of a ±hhmm
// zone wrongly (it ignores them); ParseDatetime honours them.
func ParseDatetime(s string) (time.Time, error) {
	m := datetimeRE.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, fmt.Errorf("%w: %q", ErrDatetime, s)
	}
	num := make([]int, 7)
	for i := range num {
		num[i], _ = strconv.Atoi(m[i+1]) // the pattern allows digits only
	}
	loc := time.UTC
	if z := m[8]; z != "" && z != "Z" {
		z = strings.ReplaceAll(z, ":", "")
		hh, _ := strconv.Atoi(z[1:3])
		mm := 0
		if len(z) == 5 {
			mm, _ = strconv.Atoi(z[3:5])
		}
		if hh > 18 || mm > 59 || hh == 18 && mm > 0 {
			return time.Time{}, fmt.Errorf("%w: zone offset %q out of range", ErrDatetime, m[8])
		}
		secs := hh*3600 + mm*60
		if z[0] == '-' {
			secs = -secs
		}
		loc = time.FixedZone(m[8], secs)
	}
	t := time.Date(num[0], time.Month(num[1]), num[2], num[3], num[4], num[5], num[6]*int(time.Millisecond), loc)
	if t.Year() != num[0] || int(t.Month()) != num[1] || t.Day() != num[2] ||
		t.Hour() != num[3] || t.Minute() != num[4] || t.Second() != num[5] {
		return time.Time{}, fmt.Errorf("%w: %q is not a valid date and time", ErrDatetime, s)
	}
	return t, nil
}

// durationRE is the grammar of java.time.Duration.parse: an optional sign,
// P, days, then T with hours, minutes and seconds, each optionally signed,
// seconds with up to nine fraction digits after '.' or ','.
var durationRE = regexp.MustCompile(`(?i)^([-+]?)P(?:([-+]?\d+)D)?(T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$`)

// ParseISODuration parses the argument of --by-duration as Kafka does (it
// uses java.time.Duration.parse): PnDTnHnMn.nS, e.g. PT0.5S, P1DT2H,
// -PT6H, with a day counted as 24 hours, letters in either case, and a
// sign allowed on the whole and on each part. Durations beyond the range of
// time.Duration (about 292 years) are rejected.
func ParseISODuration(s string) (time.Duration, error) {
	m := durationRE.FindStringSubmatch(s)
	if m == nil || (m[2] == "" && m[3] == "") || (m[3] != "" && m[4] == "" && m[5] == "" && m[6] == "") {
		return 0, fmt.Errorf("%w: %q", ErrDuration, s)
	}
	// Sum in nanoseconds with big integers, then check the range once.
	total := new(big.Int)
	add := func(part string, unit time.Duration) bool {
		if part == "" {
			return true
		}
		v, ok := new(big.Int).SetString(strings.TrimPrefix(part, "+"), 10)
		if !ok {
			return false
		}
		total.Add(total, v.Mul(v, big.NewInt(int64(unit))))
		return true
	}
	ok := add(m[2], 24*time.Hour) && add(m[4], time.Hour) && add(m[5], time.Minute) && add(m[6], time.Second)
	if !ok {
		return 0, fmt.Errorf("%w: %q", ErrDuration, s)
	}
	if frac := m[7]; frac != "" {
		ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		if strings.HasPrefix(m[6], "-") {
			ns = -ns
		}
		total.Add(total, big.NewInt(ns))
	}
	if m[1] == "-" {
		total.Neg(total)
	}
	if !total.IsInt64() || total.Int64() == math.MinInt64 {
		return 0, fmt.Errorf("%w: %q is out of range", ErrDuration, s)
	}
	return time.Duration(total.Int64()), nil
}
