package coordinator

import (
	"context"
	"errors"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/backoff"
	"github.com/zkconsumer/zkconsumer/internal/grouperr"
)

// permanentError marks an error that Retry must not repeat.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err as one that repeating the request cannot mend;
// Retry returns it, unmarked, at once. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// Retriable is the one rule of every client of the group coordinator for
// what a request's error allows: nil, errors marked Permanent, and Kafka
// errors that grouperr does not call Retriable fail for good; everything
// else is repeated: retriable Kafka errors (a moved or loading
// coordinator, a timeout), lost connections, timeouts, and failures to
// find or reach the coordinator.
func Retriable(err error) bool {
	var p permanentError
	if err == nil || errors.As(err, &p) {
		return false
	}
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		return grouperr.Retriable(kerr)
	}
	return true
}

// Retry runs op until it succeeds or fails for good (see Retriable): at
// most attempts times (0: until ctx ends), retryBackoff apart, within
// ctx. Its error is op's last, unmarked, or that joined with the cause of
// ctx when ctx ended first. op looks the coordinator up again itself
// after errors that call for it (grouperr.CoordinatorMoved, a lost
// connection), so that the next attempt goes to the new one.
func Retry(ctx context.Context, attempts int, retryBackoff time.Duration, op func() error) error {
	var err error
	for attempt := 0; attempts <= 0 || attempt < attempts; attempt++ {
		if attempt > 0 && !backoff.Sleep(ctx, retryBackoff) {
			return errors.Join(err, context.Cause(ctx))
		}
		if ctx.Err() != nil {
			return errors.Join(err, context.Cause(ctx))
		}
		err = op()
		if !Retriable(err) {
			var p permanentError
			if errors.As(err, &p) {
				return p.err
			}
			return err
		}
	}
	return err
}
