package connector

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReportLogsOnlyWhatErrorsCannotCarry: an error sent on Errors is
// logged at DEBUG only (so an application that prints what it reads does
// not see it twice at the default level); one dropped because Errors was
// not read, or reported after Shutdown closed the channel, is logged at
// WARN.
func TestReportLogsOnlyWhatErrorsCannotCarry(t *testing.T) {
	var buf bytes.Buffer
	c := &ConsumerConnector{
		log:  slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		errs: make(chan error, 2),
	}
	lines := func() []string {
		defer buf.Reset()
		return strings.Split(strings.TrimSpace(buf.String()), "\n")
	}
	e1, e2, e3, e4 := errors.New("first"), errors.New("second"), errors.New("third"), errors.New("fourth")

	c.report(e1)
	got := lines()
	require.Len(t, got, 1)
	require.Contains(t, got[0], `level=DEBUG msg="consumer error reported on Errors" err=first`)

	c.report(e2)
	c.report(e3) // the buffer holds two: first is dropped
	got = lines()
	require.Len(t, got, 3, "%q", got)
	require.Contains(t, got[0], "level=DEBUG")
	require.Contains(t, got[1], "level=DEBUG")
	require.Contains(t, got[2], `level=WARN msg="consumer error dropped: Errors is not read" err=first`)
	require.Equal(t, e2, <-c.errs)
	require.Equal(t, e3, <-c.errs)

	c.shutdown = true
	c.report(e4)
	got = lines()
	require.Len(t, got, 1)
	require.Contains(t, got[0], `level=WARN msg="consumer error after shutdown" err=fourth`)
	require.Empty(t, c.errs)
}
