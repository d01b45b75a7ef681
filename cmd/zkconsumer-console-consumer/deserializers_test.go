package main

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDeserializersPrintAsKafkas(t *testing.T) {
	const pkg = "org.apache.kafka.common.serialization."
	for _, tc := range []struct {
		class string
		data  []byte
		want  string
		err   string
	}{
		{class: "LongDeserializer", data: be64(math.MaxUint64), want: "-1"},
		{class: "LongDeserializer", data: be64(1 << 40), want: "1099511627776"},
		{class: "LongDeserializer", data: []byte("null"), err: "Size of data received by LongDeserializer is not 8"},
		{class: "IntegerDeserializer", data: be32(math.MaxUint32 - 1), want: "-2"},
		{class: "IntegerDeserializer", data: []byte{1}, err: "Size of data received by IntegerDeserializer is not 4"},
		{class: "ShortDeserializer", data: be16(32768), want: "-32768"},
		{class: "ShortDeserializer", data: []byte{1, 2, 3}, err: "Size of data received by ShortDeserializer is not 2"},
		{class: "DoubleDeserializer", data: f64(2.5), want: "2.5"},
		{class: "DoubleDeserializer", data: []byte{1}, err: "Size of data received by Deserializer is not 8"},
		{class: "FloatDeserializer", data: f32(0.1), want: "0.1"},
		{class: "FloatDeserializer", data: []byte{1}, err: "Size of data received by Deserializer is not 4"},
		{class: "StringDeserializer", data: []byte("null"), want: "null"},
		{class: "StringDeserializer", data: []byte{'a', 0xE2, 0x82, 'b'}, want: "a\uFFFDb"},
		{class: "StringDeserializer", data: []byte{0xED, 0xA0, 0x80}, want: "\uFFFD"},
		{class: "StringDeserializer", data: []byte{0xE0, 0x80, 0x80}, want: "\uFFFD\uFFFD\uFFFD"},
		{class: "StringDeserializer", data: []byte{0xF4, 0x90, 0x80, 0x80}, want: "\uFFFD\uFFFD\uFFFD\uFFFD"},
		{class: "StringDeserializer", data: []byte{0xF0, 0x9F, 0x98}, want: "\uFFFD"},
		{class: "StringDeserializer", data: []byte("😀é"), want: "😀é"},
		{class: "BytesDeserializer", data: []byte("a\\b\x00~\x7f"), want: `a\x5Cb\x00~\x7F`},
		{class: "ByteBufferDeserializer", data: []byte("abc"), want: "java.nio.HeapByteBuffer[pos=0 lim=3 cap=3]"},
		{class: "UUIDDeserializer", data: []byte("123E4567-E89B-12D3-A456-426614174000"), want: "123e4567-e89b-12d3-a456-426614174000"},
		{class: "UUIDDeserializer", data: []byte("1-2-3-4-5"), want: "00000001-0002-0003-0004-000000000005"},
		{class: "UUIDDeserializer", data: []byte("null"), err: "Invalid UUID string: null"},
	} {
		d, err := lookupDeserializer(pkg + tc.class)
		require.NoError(t, err)
		got, err := d([]byte("prefix:"), tc.data)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.class)
			require.True(t, errors.Is(err, errSerialization))
			continue
		}
		require.NoError(t, err, tc.class)
		require.Equal(t, "prefix:"+tc.want, string(got), "%s %x", tc.class, tc.data)
	}

	d, err := lookupDeserializer(pkg + "ByteArrayDeserializer")
	require.NoError(t, err)
	got, err := d(nil, []byte("x"))
	require.NoError(t, err)
	require.Regexp(t, `^\[B@[0-9a-f]+$`, string(got), "as Java prints a byte[]")

	_, err = lookupDeserializer("com.example.Nope")
	require.EqualError(t, err, "java.lang.ClassNotFoundException: com.example.Nope")
}

func TestJavaFloatToString(t *testing.T) {
	tenth, fifth := 0.1, 0.2
	for _, tc := range []struct {
		v    float64
		bits int
		want string
	}{
		{1, 64, "1.0"}, {100, 64, "100.0"}, {-2.5, 64, "-2.5"}, {0.001, 64, "0.001"}, {1e-4, 64, "1.0E-4"},
		{9999999, 64, "9999999.0"}, {1e7, 64, "1.0E7"}, {123456789, 64, "1.23456789E8"}, {tenth + fifth, 64, "0.30000000000000004"},
		{1.5e300, 64, "1.5E300"}, {-2.5e-300, 64, "-2.5E-300"}, {math.Copysign(0, -1), 64, "-0.0"}, {0, 64, "0.0"},
		{math.NaN(), 64, "NaN"}, {math.Inf(1), 64, "Infinity"}, {math.Inf(-1), 64, "-Infinity"},
		{float64(float32(0.1)), 32, "0.1"}, {float64(float32(1e-5)), 32, "1.0E-5"}, {float64(float32(16777216)), 32, "1.6777216E7"},
		{math.MaxFloat32, 32, "3.4028235E38"}, {float64(float32(1234.5)), 32, "1234.5"},
	} {
		require.Equal(t, tc.want, string(appendJavaFloat(nil, tc.v, tc.bits)), "%v", tc.v)
	}
}
