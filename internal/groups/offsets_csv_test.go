package groups

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func tp(topic string, p int32) TopicPartition { return TopicPartition{Topic: topic, Partition: p} }

func po(group, topic string, p int32, off int64) PartitionOffset {
	return PartitionOffset{Group: group, TopicPartition: tp(topic, p), Offset: off}
}

func TestReadCSV(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []PartitionOffset
	}{
		{"empty", "", nil},
		{"blank lines only", "\n \n\r\n", nil},
		{"single group", "orders,0,5\norders,1,0\n", []PartitionOffset{po("", "orders", 0, 5), po("", "orders", 1, 0)}},
		// Kafka's --export ends with println, so its files end with an empty line.
		{"kafka export trailer", "t,0,1\n\n", []PartitionOffset{po("", "t", 0, 1)}},
		{"no final newline", "t,0,1", []PartitionOffset{po("", "t", 0, 1)}},
		{"crlf", "t,0,1\r\nt,1,2\r\n", []PartitionOffset{po("", "t", 0, 1), po("", "t", 1, 2)}},
		{"bom", "\uFEFFt,0,1\n", []PartitionOffset{po("", "t", 0, 1)}},
		{"blank line inside", "t,0,1\n\nt,1,2\n", []PartitionOffset{po("", "t", 0, 1), po("", "t", 1, 2)}},
		{"spaces around numbers", "t, 0 , 7 \n", []PartitionOffset{po("", "t", 0, 7)}},
		{"file order kept", "t,1,1\nt,0,0\n", []PartitionOffset{po("", "t", 1, 1), po("", "t", 0, 0)}},
		{"multi group", "g1,t,0,5\ng2,t,0,6\n", []PartitionOffset{po("g1", "t", 0, 5), po("g2", "t", 0, 6)}},
		{"quoted group", "\"a,b\",t,0,5\n\"say \"\"hi\"\"\",t,0,6\n", []PartitionOffset{po("a,b", "t", 0, 5), po(`say "hi"`, "t", 0, 6)}},
		{"quoted topic", "\"t\",\"0\",\"5\"\n", []PartitionOffset{po("", "t", 0, 5)}},
		{"max values", "t,2147483647,9223372036854775807\n", []PartitionOffset{po("", "t", 2147483647, 9223372036854775807)}},
		{"legal topic characters", "a.B_c-9,0,0\n", []PartitionOffset{po("", "a.B_c-9", 0, 0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadCSV(strings.NewReader(tc.in))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestReadCSVErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		line     int
		text     string
		want     error
	}{
		{"two fields", "t,0\n", 1, "t,0", ErrFieldCount},
		{"five fields", "g,t,0,1,2\n", 1, "g,t,0,1,2", ErrFieldCount},
		{"column count changes", "t,0,1\n\ng,t,1,2\n", 3, "g,t,1,2", ErrFieldCount},
		{"four then three", "g,t,0,1\nt,1,2\n", 2, "t,1,2", ErrFieldCount},
		{"unbalanced quote", "t,0,1\n\"t,0,1\n", 2, "\"t,0,1", ErrSyntax},
		{"header line", "topic,partition,offset\nt,0,1\n", 1, "topic,partition,offset", ErrInvalidPartition},
		{"partition not a number", "t,0,1\nt,x,1\n", 2, "t,x,1", ErrInvalidPartition},
		{"negative partition", "t,-1,1\n", 1, "t,-1,1", ErrInvalidPartition},
		{"partition overflow", "t,2147483648,1\n", 1, "t,2147483648,1", ErrInvalidPartition},
		{"offset not a number", "t,0,1.5\n", 1, "t,0,1.5", ErrInvalidOffset},
		{"offset overflow", "t,0,9223372036854775808\n", 1, "t,0,9223372036854775808", ErrInvalidOffset},
		{"negative offset", "t,0,-1\n", 1, "t,0,-1", ErrNegativeOffset},
		{"empty topic", ",0,1\n", 1, ",0,1", ErrInvalidTopic},
		{"illegal topic", "a b,0,1\n", 1, "a b,0,1", ErrInvalidTopic},
		{"topic dot", ".,0,1\n", 1, ".,0,1", ErrInvalidTopic},
		{"topic too long", strings.Repeat("x", 250) + ",0,1\n", 1, strings.Repeat("x", 250) + ",0,1", ErrInvalidTopic},
		{"empty group", ",t,0,1\n", 1, ",t,0,1", ErrInvalidGroup},
		{"group with control char", "\"a\tb\",t,0,1\n", 1, "\"a\tb\",t,0,1", ErrInvalidGroup},
		{"duplicate", "t,0,1\nt,1,1\r\nt,0,2\n", 3, "t,0,2", ErrDuplicate},
		{"duplicate in a group", "g,t,0,1\nh,t,0,1\ng,t,0,2\n", 3, "g,t,0,2", ErrDuplicate},
		{"line too long", "t,0,1\n" + strings.Repeat("x", MaxLineLength+1), 2, "", ErrLineTooLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadCSV(strings.NewReader(tc.in))
			require.Nil(t, got, "nothing is returned on error")
			require.ErrorIs(t, err, tc.want)
			var le *LineError
			require.ErrorAs(t, err, &le)
			require.Equal(t, tc.line, le.Line)
			require.Equal(t, tc.text, le.Text)
			require.Contains(t, err.Error(), fmt.Sprintf("line %d: ", tc.line))
		})
	}
}

func TestReadCSVCollectsErrors(t *testing.T) {
	got, err := ReadCSV(strings.NewReader("t,0,1\nt,x,1\nt,2,2\nt,3,-3\n"))
	require.Nil(t, got)
	var lines []int
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var le *LineError
		require.ErrorAs(t, e, &le)
		lines = append(lines, le.Line)
	}
	require.Equal(t, []int{2, 4}, lines)
	require.ErrorIs(t, err, ErrInvalidPartition)
	require.ErrorIs(t, err, ErrNegativeOffset)

	var many strings.Builder
	for i := range 30 {
		fmt.Fprintf(&many, "t,%d,x\n", i)
	}
	_, err = ReadCSV(strings.NewReader(many.String()))
	require.Len(t, err.(interface{ Unwrap() []error }).Unwrap(), 21)
	require.Contains(t, err.Error(), "10 more malformed lines")
}

func TestLineErrorMessage(t *testing.T) {
	err := error(&LineError{Line: 7, Text: "t,x,1", Err: ErrInvalidPartition})
	require.Equal(t, `line 7: invalid partition: "t,x,1"`, err.Error())
	require.ErrorIs(t, err, ErrInvalidPartition)
}

func TestWriteCSVGolden(t *testing.T) {
	single := []PartitionOffset{po("", "payments", 1, 7), po("", "orders", 10, 3), po("", "orders", 2, 0), po("", "orders", 1, 120)}
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, single))
	golden(t, "offsets_single.csv", buf.Bytes())
	require.Equal(t, po("", "payments", 1, 7), single[0], "the caller's slice is not reordered")

	multi := []PartitionOffset{po("g2", "t", 0, 1), po("billing, EU", "orders", 0, 5), po("g1", "t", 1, 2), po("g1", "t", 0, 3)}
	buf.Reset()
	require.NoError(t, WriteCSV(&buf, multi))
	golden(t, "offsets_multi.csv", buf.Bytes())

	buf.Reset()
	require.NoError(t, WriteCSV(&buf, nil))
	require.Empty(t, buf.String())
}

func TestWriteCSVErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		offs []PartitionOffset
		want error
	}{
		{"mixed groups", []PartitionOffset{po("", "t", 0, 1), po("g", "t", 0, 1)}, ErrMixedGroups},
		{"bad topic", []PartitionOffset{po("", "t/x", 0, 1)}, ErrInvalidTopic},
		{"negative partition", []PartitionOffset{po("", "t", -1, 1)}, ErrInvalidPartition},
		{"negative offset", []PartitionOffset{po("", "t", 0, -1)}, ErrNegativeOffset},
		{"duplicate", []PartitionOffset{po("g", "t", 0, 1), po("g", "t", 0, 2)}, ErrDuplicate},
		{"group newline", []PartitionOffset{po("a\nb", "t", 0, 1)}, ErrInvalidGroup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			require.ErrorIs(t, WriteCSV(&buf, tc.offs), tc.want)
			require.Zero(t, buf.Len(), "nothing is written on error")
		})
	}
	require.ErrorIs(t, WriteCSV(failingWriter{}, []PartitionOffset{po("", "t", 0, 1)}), os.ErrClosed)
}

func TestCSVRoundTrip(t *testing.T) {
	for _, offs := range [][]PartitionOffset{
		{po("", "a", 0, 0), po("", "b", 3, 1<<62)},
		{po(" lead", "a", 0, 0), po(`q"uote`, "a", 0, 1), po("comma,", "b", 1, 2), po("ünï", "c", 0, 3)},
	} {
		var buf bytes.Buffer
		require.NoError(t, WriteCSV(&buf, offs))
		got, err := ReadCSV(&buf)
		require.NoError(t, err)
		require.Equal(t, sortedPO(offs), got)
	}
}

func sortedPO(offs []PartitionOffset) []PartitionOffset {
	s := slices.Clone(offs)
	slices.SortFunc(s, comparePO)
	return s
}

func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{"t,0,1\n", "g,t,0,1\r\ng,t,1,2\n", "\"a,b\",t,0,5\n", "t,0,x", "\uFEFF\n\nt,1,2", "\"\"\"\",t,0,1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		offs, err := ReadCSV(bytes.NewReader(in))
		if err != nil {
			require.Nil(t, offs)
			var le *LineError
			require.ErrorAs(t, err, &le)
			require.Positive(t, le.Line)
			return
		}
		var buf bytes.Buffer
		require.NoError(t, WriteCSV(&buf, offs))
		again, err := ReadCSV(bytes.NewReader(buf.Bytes()))
		require.NoError(t, err, "re-reading %q", buf.String())
		require.Equal(t, sortedPO(offs), again)
		if len(offs) > 0 {
			f, err := DetectFormat(buf.Bytes())
			require.NoError(t, err)
			require.Equal(t, FormatCSV, f)
		}
	})
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
