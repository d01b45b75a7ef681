package fetch

import (
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// A broker can refuse a partition's fetch for as long as it likes: with
// TOPIC_AUTHORIZATION_FAILED when the consumer may describe the topic but
// not read it, say. The partition goes back to the leader finder, which
// finds its leader at once, and the next fetch fails the same way, every
// RefreshLeaderBackoff. Such a failure is reported (Config.OnError, and the
// log at WARN) the first time, whenever its error code changes, and
// otherwise once every leaderlessRepeat while it lasts, as a leaderless
// partition is; the failures in between are logged at DEBUG.
type refusals struct {
	mu   sync.Mutex
	last map[zkutil.TopicPartition]refusal
}

// refusal is the last report of one partition's failing fetches.
type refusal struct {
	code sarama.KError
	at   time.Time
}

// due reports whether the failure of tp's fetch with code at now is to be
// reported, and if so records it as reported.
func (r *refusals) due(tp zkutil.TopicPartition, code sarama.KError, now time.Time, repeat time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if last, ok := r.last[tp]; ok && last.code == code && now.Sub(last.at) < repeat {
		return false
	}
	if r.last == nil {
		r.last = map[zkutil.TopicPartition]refusal{}
	}
	r.last[tp] = refusal{code: code, at: now}
	return true
}
