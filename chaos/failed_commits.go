package chaos

import "time"

// failedCommit is a commit that failed at a member, as its log records it
// (RecCommitFailed): the offset it tried to write for one partition, and
// when the member learnt of the failure.
type failedCommit struct {
	off int64
	ts  int64
}

// failedCommitWindow is how long before a member learnt that a commit
// failed the store may have applied that commit: the longest a chaos
// member's commit runs (an automatic commit is bounded by the session
// timeout, the commit of Shutdown by the member's shutdown deadline, twice
// the session timeout and 10 s).
func (v *verifier) failedCommitWindow() int64 {
	return int64(2*v.res.Info.SessionTimeout + 10*time.Second)
}

// failedAtMember reports whether the store's commit record r of tp is the
// write of a commit that failed at its member: a member learnt, within
// failedCommitWindow after the store applied r, that a commit of r's offset
// of tp failed. Such a commit may be in the store while the member, and
// the group's coordinator (whose cache Kafka does not update when it
// answers with an error), go on from the offset committed before.
func (v *verifier) failedAtMember(tp topicPartition, r CommitRecord) bool {
	if r.Deleted {
		return false
	}
	for _, f := range v.failed[tp] {
		if f.off == r.Offset && r.Time <= f.ts && f.ts-r.Time <= v.failedCommitWindow() {
			return true
		}
	}
	return false
}

// passedOnlyByFailedCommits reports whether the commits of tp that the
// store applied before to and that passed offset off (committed an offset
// above it) all failed at their members, and there was one at least. A
// single commit that passed off and succeeded makes it false.
func (v *verifier) passedOnlyByFailedCommits(tp topicPartition, off, to int64) bool {
	found := false
	for _, r := range v.commits[tp] {
		if r.Deleted || r.Time+int64(time.Millisecond) > to || r.Offset <= off {
			continue
		}
		if !v.failedAtMember(tp, r) {
			return false
		}
		found = true
	}
	return found
}
