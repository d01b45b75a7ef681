package grouperr

import (
	"testing"

	"github.com/IBM/sarama"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestClasses: every code is in the classes Java's consumer puts it in,
// and no code is both retriable and fenced.
func TestClasses(t *testing.T) {
	for _, tc := range []struct {
		kerr                    sarama.KError
		moved, retriable, fence bool
	}{
		{sarama.ErrNoError, false, false, false},
		{sarama.ErrNotCoordinatorForConsumer, true, true, false},
		{sarama.ErrConsumerCoordinatorNotAvailable, true, true, false},
		{sarama.ErrRequestTimedOut, false, true, false},
		{sarama.ErrOffsetsLoadInProgress, false, true, false},
		{sarama.ErrIllegalGeneration, false, false, true},
		{sarama.ErrUnknownMemberId, false, false, true},
		{sarama.ErrFencedInstancedId, false, false, true},
		{sarama.ErrRebalanceInProgress, false, false, true},
		{sarama.ErrGroupAuthorizationFailed, false, false, false},
		{sarama.ErrOffsetMetadataTooLarge, false, false, false},
		{sarama.ErrUnknownTopicOrPartition, false, false, false},
		{sarama.ErrNetworkException, false, true, false},
		{FencedMemberEpoch, false, false, true},
		{UnreleasedInstanceID, false, true, false},
		{StaleMemberEpoch, false, true, false},
		{UnsupportedAssignor, false, false, false},
	} {
		if got := CoordinatorSuspect(tc.kerr); got != (tc.kerr == sarama.ErrRequestTimedOut) {
			t.Errorf("CoordinatorSuspect(%v) = %v", tc.kerr, got)
		}
		if got := CoordinatorMoved(tc.kerr); got != tc.moved {
			t.Errorf("CoordinatorMoved(%v) = %v", tc.kerr, got)
		}
		if got := Retriable(tc.kerr); got != tc.retriable {
			t.Errorf("Retriable(%v) = %v", tc.kerr, got)
		}
		if got := Fenced(tc.kerr); got != tc.fence {
			t.Errorf("Fenced(%v) = %v", tc.kerr, got)
		}
	}
}
