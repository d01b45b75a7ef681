package chaos

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/zkconsumer/zkconsumer/connector"
)

// TestMemberLogsTheOffsetsOfAFailedCommit: an error on Errors() that is a
// failed commit (an automatic one here) is logged with the offsets the
// commit tried to write, which the verifier needs (the store may still
// apply them); other errors are logged as errors only.
func TestMemberLogsTheOffsetsOfAFailedCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	w, err := createLog(path)
	if err != nil {
		t.Fatal(err)
	}
	m := &member{log: w}
	failed := &connector.CommitError{Err: errors.New("request timed out"), Offsets: map[connector.TopicPartition]int64{
		{Topic: "a", Partition: 3}: 4962, {Topic: "a", Partition: 5}: 4870, {Topic: "b", Partition: 0}: 7}}
	m.reportError("", fmt.Errorf("%w: %w", connector.ErrAutoCommit, failed))
	m.reportError("", errors.New("fetcher: broker 1: EOF"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var recs []Record
	if _, err := ReadLog(path, func(r *Record) error { recs = append(recs, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Kind != RecError || recs[1].Kind != RecCommitFailed || recs[2].Kind != RecError {
		t.Fatalf("records %+v: want error, commit-failed, error", recs)
	}
	want := map[string]map[int32]int64{"a": {3: 4962, 5: 4870}, "b": {0: 7}}
	if fmt.Sprint(recs[1].Offsets) != fmt.Sprint(want) || recs[1].TS != recs[0].TS {
		t.Fatalf("commit-failed record %+v, want offsets %v at the error's time", recs[1], want)
	}
}
