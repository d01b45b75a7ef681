package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/IBM/sarama"
)

func TestUndecodable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{sarama.PacketDecodingError{Info: "CRC didn't match"}, true},
		{fmt.Errorf("wrapped: %w", sarama.PacketDecodingError{Info: "x"}), true},
		{sarama.ErrInsufficientData, true},
		{sarama.ErrDecompressedBatchTooLarge, true},
		{errors.New("snappy: corrupt input"), true},
		{sarama.ErrNotLeaderForPartition, false},
		{sarama.ErrNotConnected, false},
		{sarama.ErrUnsupportedVersion, false},
		{io.EOF, false},
		{io.ErrUnexpectedEOF, false},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, false},
		{syscall.EPIPE, false},
		{net.ErrClosed, false},
		{context.Canceled, false},
	} {
		if got := undecodable(c.err); got != c.want {
			t.Errorf("undecodable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
