package stream_test

import (
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/stream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The package's errors are the connector's: one errors.Is check covers
// both, whichever package the application names.
func TestErrorsAreTheConnectorsToo(t *testing.T) {
	for _, c := range []struct {
		name         string
		stream, conn error
	}{
		{"ErrShutdown", stream.ErrShutdown, connector.ErrShutdown},
		{"ErrConsumerTimeout", stream.ErrConsumerTimeout, connector.ErrConsumerTimeout},
		{"ErrMessageTooLarge", stream.ErrMessageTooLarge, connector.ErrMessageTooLarge},
		{"ErrCorruptMessage", stream.ErrCorruptMessage, connector.ErrCorruptMessage},
	} {
		if c.stream == nil || !errors.Is(c.stream, c.conn) || !errors.Is(c.conn, c.stream) {
			t.Errorf("stream.%s and connector.%s are not the same error", c.name, c.name)
		}
	}
	pe := &connector.PartitionError{Topic: "t", Partition: 1, Err: stream.ErrMessageTooLarge}
	var target *stream.PartitionError
	if !errors.As(error(pe), &target) || !errors.Is(pe, connector.ErrMessageTooLarge) {
		t.Error("a connector.PartitionError is not a stream.PartitionError wrapping its error")
	}
}
