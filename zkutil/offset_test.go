package zkutil

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const offPath = "/consumers/g/offsets/orders/3"

func TestEncodeOffset(t *testing.T) {
	tests := []struct {
		offset int64
		want   string
	}{
		{0, "0"},
		{1234, "1234"},
		{NoOffset, "-1"},
		{math.MaxInt64, "9223372036854775807"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, string(EncodeOffset(tt.offset)))
	}
}

func TestDecodeOffset(t *testing.T) {
	tests := []struct {
		data string
		want int64
	}{
		{"0", 0},
		{"1234", 1234},
		{"9223372036854775807", math.MaxInt64},
		{"-1", NoOffset},
		{"+42", 42},
		{"007", 7},
		{"-0", 0},
		{"1234\n", 1234},
		{" \t1234\r\n", 1234},
	}
	for _, tt := range tests {
		got, err := DecodeOffset(offPath, []byte(tt.data))
		require.NoError(t, err, "DecodeOffset(%q)", tt.data)
		assert.Equal(t, tt.want, got, "DecodeOffset(%q)", tt.data)
	}
}

func TestDecodeOffsetRejects(t *testing.T) {
	for _, data := range []string{
		"", " ", "\n", "abc", "12a", "1 2", "1.5", "1e3", "0x10", "1_000",
		"-2", "-9223372036854775808", "9223372036854775808", "--1", "+", "-",
		`"12"`, "null", "\x00", "١٢", // Arabic-Indic digits, which Java's parseLong would take
	} {
		got, err := DecodeOffset(offPath, []byte(data))
		requireDecodeError(t, err, offPath)
		assert.Zero(t, got, "DecodeOffset(%q)", data)
	}
}

func TestOffsetRoundTrip(t *testing.T) {
	for _, n := range []int64{NoOffset, 0, 1, 1 << 40, math.MaxInt64} {
		got, err := DecodeOffset(offPath, EncodeOffset(n))
		require.NoError(t, err)
		assert.Equal(t, n, got)
	}
}

func FuzzDecodeOffset(f *testing.F) {
	for _, s := range []string{
		"0", "1234", "-1", "-2", "+7", "1234\n", " 1 ", "", "x", "1.0",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := DecodeOffset(offPath, data)
		if err != nil {
			requireDecodeError(t, err, offPath)
			return
		}
		require.GreaterOrEqual(t, n, NoOffset)
		enc := EncodeOffset(n)
		require.Equal(t, strconv.FormatInt(n, 10), string(enc))
		back, err := DecodeOffset(offPath, enc)
		require.NoError(t, err)
		require.Equal(t, n, back)
	})
}
