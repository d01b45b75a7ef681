package groups

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The forms Kafka's UtilsTest feeds to Utils.getDateTime (the formatter
// patterns yyyy-MM-dd'T'HH:mm:ss.SSS followed by nothing, Z, X, XX or XXX),
// and those it expects to fail.
func TestParseDatetime(t *testing.T) {
	base := time.Date(2020, 11, 9, 12, 34, 56, 123e6, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"2020-11-09T12:34:56.123", base}, // no zone: UTC, as Kafka appends Z
		{"2020-11-09T12:34:56.123Z", base},
		{"2020-11-09T13:34:56.123+01", base},
		{"2020-11-09T13:34:56.123+0100", base},
		{"2020-11-09T13:34:56.123+01:00", base},
		{"2020-11-09T07:04:56.123-05:30", base},
		{"2020-11-09T07:04:56.123-0530", base},
		{"2020-11-09T00:00:00.000-12", time.Date(2020, 11, 9, 12, 0, 0, 0, time.UTC)},
		{"2024-02-29T23:59:59.999Z", time.Date(2024, 2, 29, 23, 59, 59, 999e6, time.UTC)},
		{"1970-01-01T00:00:00.000", time.Unix(0, 0)},
	} {
		got, err := ParseDatetime(tc.in)
		require.NoError(t, err, tc.in)
		require.True(t, tc.want.Equal(got), "%s: got %v want %v", tc.in, got, tc.want)
	}
	for _, in := range []string{
		"",
		"2020-11-09 12:34:56",             // no 'T'
		"2020-11-09T12:34:56",             // no milliseconds
		"2020-11-09T12:34:56Z",            // no milliseconds
		"2020-11-09T12:34:56.123456",      // microseconds
		"2020-11-09T12:34:56.123456789",   // nanoseconds
		"2020-11-09T12:34:56.Z",           // the pattern ss.X
		"2020-11-09T12:34:56.12",          // two fraction digits
		"2020-11-09T12:34:56.123 Z",       // space
		"2020-11-09T12:34:56.123+1",       // one-digit zone
		"2020-11-09T12:34:56.123+19:00",   // zone out of range
		"2020-11-09T12:34:56.123+01:60",   // zone minutes out of range
		"2020-13-09T12:34:56.123",         // month 13
		"2021-02-29T12:34:56.123",         // not a leap year
		"2020-11-09T24:00:00.000",         // hour 24
		"2020-11-09T12:60:00.000",         // minute 60
		"2020-11-09T12:34:60.000",         // second 60
		"20-11-09T12:34:56.123",           // short year
		"2020-1-9T1:2:3.004",              // unpadded
		"2020-11-09T12:34:56.123Zgarbage", // trailing text
		"１２３４-11-09T12:34:56.123",         // non-ASCII digits
		"2020-11-09t12:34:56.123",         // lower-case t
	} {
		_, err := ParseDatetime(in)
		require.ErrorIs(t, err, ErrDatetime, "%q", in)
	}
}

// The examples of java.time.Duration.parse's documentation, which
// --by-duration uses, and more.
func TestParseISODuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"PT20.345S", 20*time.Second + 345*time.Millisecond},
		{"PT15M", 15 * time.Minute},
		{"PT10H", 10 * time.Hour},
		{"P2D", 48 * time.Hour},
		{"P2DT3H4M", 51*time.Hour + 4*time.Minute},
		{"PT-6H3M", -6*time.Hour + 3*time.Minute},
		{"-PT6H3M", -6*time.Hour - 3*time.Minute},
		{"-PT-6H+3M", 6*time.Hour - 3*time.Minute},
		{"PT0.5S", 500 * time.Millisecond},
		{"P1DT2H", 26 * time.Hour},
		{"PT0S", 0},
		{"pt1m", time.Minute},
		{"PT1,5S", 1500 * time.Millisecond},
		{"PT1.S", time.Second},
		{"PT-0.5S", -500 * time.Millisecond},
		{"PT-1.5S", -1500 * time.Millisecond},
		{"PT0.000000001S", time.Nanosecond},
		{"+P1D", 24 * time.Hour},
		{"P0D", 0},
		{"PT90M", 90 * time.Minute},
		{"PT2562047H47M16.854775807S", time.Duration(1<<63 - 1)},
	} {
		got, err := ParseISODuration(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, in := range []string{
		"", "P", "PT", "P1DT", "1H", "PT1H ", " PT1H",
		"P1Y", "P1M", "P1W", // java.time.Duration has no years, months or weeks
		"PT1.5H", "PT1.5M", "P1.5D", // fractions only for seconds
		"PT1.1234567890S", // ten fraction digits
		"PT1S2M",          // wrong order
		"PT--1S", "P-D",
		"PT2562047H47M16.854775808S", // beyond time.Duration
		"P999999999999999999999D",
	} {
		_, err := ParseISODuration(in)
		require.ErrorIs(t, err, ErrDuration, "%q", in)
	}
}

func TestResetModeString(t *testing.T) {
	want := []string{"to-earliest", "to-latest", "to-current", "to-offset", "shift-by", "to-datetime", "by-duration", "from-file"}
	for i, w := range want {
		require.Equal(t, w, ResetMode(i+1).String())
	}
	require.Equal(t, "ResetMode(0)", ResetMode(0).String())
	require.Equal(t, "ResetMode(9)", ResetMode(9).String())
}

func TestResetSpecValidate(t *testing.T) {
	require.NoError(t, ResetSpec{Mode: ResetToOffset, Offset: 0}.Validate())
	require.ErrorIs(t, ResetSpec{Mode: ResetToOffset, Offset: -1}.Validate(), ErrNegativeOffset)
	require.NoError(t, ResetSpec{Mode: ResetShiftBy, Shift: -100}.Validate())
	require.ErrorIs(t, ResetSpec{Mode: ResetFromFile, File: map[TopicPartition]int64{tp("t", 0): -2}}.Validate(), ErrNegativeOffset)
	require.ErrorIs(t, ResetSpec{}.Validate(), ErrUnknownMode)
	require.ErrorIs(t, ResetSpec{Mode: 42}.Validate(), ErrUnknownMode)
}
