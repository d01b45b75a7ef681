package zkutil

import (
	"bytes"
	"crypto/rand"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var idTime = time.UnixMilli(1531000000000)

func TestNewConsumerIDConfigured(t *testing.T) {
	id, err := NewConsumerID("mygroup", "c1", "ignored", idTime, nil)
	require.NoError(t, err)
	assert.Equal(t, "mygroup_c1", id)

	// consumer.id is not character-checked, as in Kafka.
	id, err = NewConsumerID("g", "ünïcode id", "", idTime, nil)
	require.NoError(t, err)
	assert.Equal(t, "g_ünïcode id", id)
}

func TestNewConsumerIDGenerated(t *testing.T) {
	tests := []struct {
		name   string
		random []byte
		want   string
	}{
		{
			name:   "plain",
			random: []byte{0x5f, 0x3a, 0x9c, 0x2e, 0x11, 0x22, 0x33, 0x44},
			want:   "mygroup_host1.example.com-1531000000000-5f3a9c2e",
		},
		{
			// A negative long: Java prints its 16 two's-complement digits.
			name:   "negative long",
			random: []byte{0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88},
			want:   "mygroup_host1.example.com-1531000000000-ffeeddcc",
		},
		{
			// No zero-padding: 0x00abcdef12344678 prints as "abcdef12344678".
			name:   "leading zero byte",
			random: []byte{0x00, 0xab, 0xcd, 0xef, 0x12, 0x34, 0x56, 0x78},
			want:   "mygroup_host1.example.com-1531000000000-abcdef12",
		},
		{
			// 0x0000000f_12344000 has nine hex digits.
			name:   "nine digits",
			random: []byte{0x00, 0x00, 0x00, 0x0f, 0x12, 0x34, 0x00, 0x00},
			want:   "mygroup_host1.example.com-1531000000000-f1234400",
		},
		{
			// 0x00000000_0f..., fewer than 8 digits, on which Java throws:
			// the next 8 bytes are used instead.
			name:   "redraw",
			random: []byte{0, 0, 0, 0, 0x0f, 0xff, 0xff, 0xff, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0},
			want:   "mygroup_host1.example.com-1531000000000-12345678",
		},
		{
			// The version nibble lands in byte 6 and can become a digit
			// of the prefix only when the long has few leading digits.
			name:   "version nibble in the prefix",
			random: []byte{0x00, 0x00, 0x00, 0x1a, 0xbc, 0xde, 0x0f, 0xff},
			want:   "mygroup_host1.example.com-1531000000000-1abcde4f",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := NewConsumerID("mygroup", "", "host1.example.com", idTime, bytes.NewReader(tt.random))
			require.NoError(t, err)
			assert.Equal(t, tt.want, id)
		})
	}
}

func TestNewConsumerIDCryptoRand(t *testing.T) {
	for range 100 {
		id, err := NewConsumerID("g", "", "h", idTime, rand.Reader)
		require.NoError(t, err)
		assert.Regexp(t, `^g_h-1531000000000-[0-9a-f]{8}$`, id)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestNewConsumerIDErrors(t *testing.T) {
	tests := []struct {
		name, group, hostname string
		random                io.Reader
	}{
		{"invalid group", "my group", "h", rand.Reader},
		{"empty group", "", "h", rand.Reader},
		{"empty hostname", "g", "", rand.Reader},
		{"nil random", "g", "h", nil},
		{"random exhausted", "g", "h", bytes.NewReader([]byte{1, 2, 3})},
		{"random always zero", "g", "h", zeroReader{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := NewConsumerID(tt.group, "", tt.hostname, idTime, tt.random)
			require.Error(t, err)
			assert.Empty(t, id)
			assert.NotRegexp(t, `^zkutil: `, err.Error())
		})
	}
	_, err := NewConsumerID("g", "", "h", idTime, bytes.NewReader(nil))
	assert.ErrorIs(t, err, io.EOF)
}

func TestValidateIDs(t *testing.T) {
	for _, ok := range []string{"g", "my-group_1.0", "ABC.xyz-09_", "-", "..."} {
		assert.NoError(t, ValidateGroupID(ok), ok)
	}
	for _, bad := range []string{"", "my group", "g/1", "g:1", "grüppe", "g\n", "g*", "g,h"} {
		err := ValidateGroupID(bad)
		require.Error(t, err, bad)
		assert.Regexp(t, `^group\.id `, err.Error())
	}
}
