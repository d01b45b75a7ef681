package groups

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadZkOffsets(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []PartitionOffset
	}{
		{"empty", "", nil},
		// The example of ExportZkOffsets' own documentation, with 0.8+ partition names.
		{"export", "/consumers/group1/offsets/topic1/1:286894308\n/consumers/group1/offsets/topic1/0:284803985\n",
			[]PartitionOffset{po("group1", "topic1", 1, 286894308), po("group1", "topic1", 0, 284803985)}},
		{"several groups", "/consumers/a/offsets/t/0:1\n/consumers/b/offsets/t/0:2\n",
			[]PartitionOffset{po("a", "t", 0, 1), po("b", "t", 0, 2)}},
		{"blank lines and crlf", "\r\n/consumers/g/offsets/t/0:1\r\n\n  \n/consumers/g/offsets/t/1:2", []PartitionOffset{po("g", "t", 0, 1), po("g", "t", 1, 2)}},
		{"surrounding spaces", "  /consumers/g/offsets/t/0:1  \n", []PartitionOffset{po("g", "t", 0, 1)}},
		{"group with odd characters", "/consumers/billing, EU ü/offsets/t/0:1\n", []PartitionOffset{po("billing, EU ü", "t", 0, 1)}},
		{"max values", "/consumers/g/offsets/t/2147483647:9223372036854775807\n", []PartitionOffset{po("g", "t", 2147483647, 9223372036854775807)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadZkOffsets(strings.NewReader(tc.in))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestReadZkOffsetsErrors(t *testing.T) {
	ok := "/consumers/g/offsets/t/0:1\n"
	for _, tc := range []struct {
		name, line string
		want       error
	}{
		{"no colon", "/consumers/g/offsets/t/0", ErrBadPath},
		{"two colons", "/consumers/g/offsets/t/0:1:2", ErrBadPath},
		{"not under consumers", "/brokers/g/offsets/t/0:1", ErrBadPath},
		{"relative", "consumers/g/offsets/t/0:1", ErrBadPath},
		{"owners not offsets", "/consumers/g/owners/t/0:1", ErrBadPath},
		{"too short", "/consumers/g/offsets/t:1", ErrBadPath},
		{"too long", "/consumers/g/offsets/t/0/x:1", ErrBadPath},
		{"trailing slash", "/consumers/g/offsets/t/0/:1", ErrBadPath},
		{"empty group", "/consumers//offsets/t/0:1", ErrInvalidGroup},
		{"dot group", "/consumers/../offsets/t/0:1", ErrInvalidGroup},
		{"bad topic", "/consumers/g/offsets/t!/0:1", ErrInvalidTopic},
		{"0.7 broker-partition", "/consumers/g/offsets/t/1-0:286894308", ErrInvalidPartition},
		{"negative partition", "/consumers/g/offsets/t/-1:1", ErrInvalidPartition},
		{"empty offset", "/consumers/g/offsets/t/0:", ErrInvalidOffset},
		{"offset not a number", "/consumers/g/offsets/t/0:abc", ErrInvalidOffset},
		{"negative offset", "/consumers/g/offsets/t/0:-1", ErrNegativeOffset},
		{"csv line", "t,0,1", ErrBadPath},
		{"duplicate", "/consumers/g/offsets/t/0:7", ErrDuplicate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadZkOffsets(strings.NewReader(ok + "\n" + tc.line + "\n" + ok))
			require.Nil(t, got)
			require.ErrorIs(t, err, tc.want)
			var le *LineError
			require.ErrorAs(t, err, &le)
			require.Equal(t, 3, le.Line)
			require.Equal(t, tc.line, le.Text)
		})
	}
}

func TestWriteZkOffsetsGolden(t *testing.T) {
	offs := []PartitionOffset{po("g2", "t", 0, 1), po("billing", "payments", 1, 7), po("billing", "orders", 10, 3), po("billing", "orders", 2, 0)}
	var buf bytes.Buffer
	require.NoError(t, WriteZkOffsets(&buf, offs))
	golden(t, "offsets_zk.txt", buf.Bytes())
	got, err := ReadZkOffsets(&buf)
	require.NoError(t, err)
	require.Equal(t, sortedPO(offs), got)
}

func TestWriteZkOffsetsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		offs []PartitionOffset
		want error
	}{
		{"no group", []PartitionOffset{po("", "t", 0, 1)}, ErrInvalidGroup},
		{"slash in group", []PartitionOffset{po("a/b", "t", 0, 1)}, ErrInvalidGroup},
		{"colon in group", []PartitionOffset{po("a:b", "t", 0, 1)}, ErrInvalidGroup},
		{"bad topic", []PartitionOffset{po("g", "", 0, 1)}, ErrInvalidTopic},
		{"negative offset", []PartitionOffset{po("g", "t", 0, -5)}, ErrNegativeOffset},
		{"duplicate", []PartitionOffset{po("g", "t", 0, 1), po("g", "t", 0, 1)}, ErrDuplicate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			require.ErrorIs(t, WriteZkOffsets(&buf, tc.offs), tc.want)
			require.Zero(t, buf.Len())
		})
	}
}

func TestDetectFormat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Format
	}{
		{"", FormatCSV},
		{"\n  \n", FormatCSV},
		{"t,0,1\n", FormatCSV},
		{"g,t,0,1", FormatCSV},
		{"t,x,1", FormatCSV}, // malformed CSV: ReadCSV says why
		{"/consumers/g/offsets/t/0:1\n", FormatZk},
		{"\uFEFF\r\n/consumers/g/offsets/t/0:1", FormatZk},
		{"/consumers/g/offsets/t/0", FormatZk}, // malformed: ReadZkOffsets says why
		{"/consumers/x,t,0,1\n", FormatCSV},    // a group that looks like a path
		{"/consumers/g/offsets/t/0:1,t,0,1", FormatCSV},
	} {
		got, err := DetectFormat([]byte(tc.in))
		require.NoError(t, err, "%q", tc.in)
		require.Equal(t, tc.want, got, "%q", tc.in)
	}
	_, err := DetectFormat([]byte("\nhello world\n"))
	require.ErrorIs(t, err, ErrUnknownFormat)
	require.Equal(t, "csv", FormatCSV.String())
	require.Equal(t, "zk", FormatZk.String())
	require.Equal(t, "Format(0)", Format(0).String())
}

func FuzzReadZkOffsets(f *testing.F) {
	for _, s := range []string{"/consumers/g/offsets/t/0:1\n", "/consumers/a b/offsets/t.x/12:0\r\n\n/consumers/c/offsets/t/1:2", "/consumers/g/offsets/t/0", "/consumers//offsets/t/0:1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		offs, err := ReadZkOffsets(bytes.NewReader(in))
		if err != nil {
			require.Nil(t, offs)
			var le *LineError
			require.ErrorAs(t, err, &le)
			require.Positive(t, le.Line)
			return
		}
		var buf bytes.Buffer
		require.NoError(t, WriteZkOffsets(&buf, offs))
		again, err := ReadZkOffsets(bytes.NewReader(buf.Bytes()))
		require.NoError(t, err, "re-reading %q", buf.String())
		require.Equal(t, sortedPO(offs), again)
		if len(offs) > 0 {
			f, err := DetectFormat(buf.Bytes())
			require.NoError(t, err)
			require.Equal(t, FormatZk, f)
		}
	})
}
