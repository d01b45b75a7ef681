package fetch

import (
	"fmt"
	"strconv"
	"time"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// A partition can stay without a leader for good: its topic was deleted,
// the consumer is not authorised to describe it, none of its replicas is
// alive. The leader finder keeps asking every RefreshLeaderBackoff, as
// Kafka's does, and reports such a partition through Config.OnError: once
// it has been leaderless for defaultLeaderlessGrace (leadership moves and
// topic creation leave partitions leaderless for a moment, which is
// routine), again whenever the reason changes (at most once per grace
// period), and otherwise every defaultLeaderlessRepeat while it lasts.
const (
	defaultLeaderlessGrace  = 5 * time.Second
	defaultLeaderlessRepeat = time.Minute
)

// noLeaderReason is why the metadata gave a partition no usable leader: the
// broker's error code for the topic or the partition, if any, and what
// else is known.
type noLeaderReason struct {
	code   sarama.KError
	detail string
}

// leaderlessState is what the leader finder remembers of a partition
// without a leader.
type leaderlessState struct {
	since        time.Time // first found without a leader
	reported     time.Time // last reported; zero if never
	lastReported noLeaderReason
}

// noLeaderReasons explains, from md, why each partition of tps has no
// leader (see leadersOf).
func noLeaderReasons(md *sarama.MetadataResponse, tps []zkutil.TopicPartition) map[zkutil.TopicPartition]noLeaderReason {
	topics := make(map[string]*sarama.TopicMetadata, len(md.Topics))
	for _, t := range md.Topics {
		topics[t.Name] = t
	}
	out := make(map[zkutil.TopicPartition]noLeaderReason, len(tps))
	for _, tp := range tps {
		out[tp] = noLeaderReasonOf(topics[tp.Topic], tp.Partition)
	}
	return out
}

func noLeaderReasonOf(t *sarama.TopicMetadata, partition int32) noLeaderReason {
	if t == nil {
		return noLeaderReason{code: sarama.ErrUnknownTopicOrPartition, detail: "the topic is missing from the metadata"}
	}
	if t.Err != sarama.ErrNoError {
		return noLeaderReason{code: t.Err}
	}
	for _, p := range t.Partitions {
		if p.ID != partition {
			continue
		}
		if p.Leader < 0 {
			if p.Err != sarama.ErrNoError {
				return noLeaderReason{code: p.Err}
			}
			return noLeaderReason{code: sarama.ErrLeaderNotAvailable, detail: "no leader elected"}
		}
		return noLeaderReason{code: p.Err, detail: "leader " + strconv.Itoa(int(p.Leader)) + " is not a known broker"}
	}
	return noLeaderReason{code: sarama.ErrUnknownTopicOrPartition, detail: "the topic has " + strconv.Itoa(len(t.Partitions)) + " partitions"}
}

// kafkaErrorNames are the protocol names of the error codes a metadata
// response gives a topic or partition without a leader.
var kafkaErrorNames = map[sarama.KError]string{
	sarama.ErrUnknown:                    "UNKNOWN_SERVER_ERROR",
	sarama.ErrUnknownTopicOrPartition:    "UNKNOWN_TOPIC_OR_PARTITION",
	sarama.ErrLeaderNotAvailable:         "LEADER_NOT_AVAILABLE",
	sarama.ErrNotLeaderForPartition:      "NOT_LEADER_OR_FOLLOWER",
	sarama.ErrReplicaNotAvailable:        "REPLICA_NOT_AVAILABLE",
	sarama.ErrInvalidTopic:               "INVALID_TOPIC_EXCEPTION",
	sarama.ErrTopicAuthorizationFailed:   "TOPIC_AUTHORIZATION_FAILED",
	sarama.ErrClusterAuthorizationFailed: "CLUSTER_AUTHORIZATION_FAILED",
	sarama.ErrKafkaStorageError:          "KAFKA_STORAGE_ERROR",
	sarama.ErrListenerNotFound:           "LISTENER_NOT_FOUND",
}

// errorName is the protocol name of code, or its number.
func errorName(code sarama.KError) string {
	if name, ok := kafkaErrorNames[code]; ok {
		return name
	}
	return "error code " + strconv.Itoa(int(code))
}

// err builds the report: it wraps ErrNoLeader and the error code.
func (r noLeaderReason) err(tp zkutil.TopicPartition, leaderless, backoff time.Duration) error {
	detail := ""
	if r.detail != "" {
		detail = " (" + r.detail + ")"
	}
	wait := leaderless.Round(time.Millisecond)
	if wait >= time.Second {
		wait = wait.Round(time.Second)
	}
	if r.code == sarama.ErrNoError {
		return &streamcore.PartitionError{Topic: tp.Topic, Partition: tp.Partition,
			Err: fmt.Errorf("%w for %v%s; retrying every %v", ErrNoLeader, wait, detail, backoff)}
	}
	return &streamcore.PartitionError{Topic: tp.Topic, Partition: tp.Partition,
		Err: fmt.Errorf("%w for %v: metadata says %s%s: %w; retrying every %v", ErrNoLeader, wait, errorName(r.code), detail, r.code, backoff)}
}

// noteLeaderless records that the partitions of still have no leader in md
// and reports those whose time has come (see defaultLeaderlessGrace). It
// forgets the partitions that are no longer leaderless. It runs on the
// leader finder's goroutine, which owns r.leaderlessParts.
func (r *run) noteLeaderless(md *sarama.MetadataResponse, still []zkutil.TopicPartition) {
	now := time.Now()
	stillSet := make(map[zkutil.TopicPartition]struct{}, len(still))
	for _, tp := range still {
		stillSet[tp] = struct{}{}
	}
	for tp, st := range r.leaderlessParts {
		if _, ok := stillSet[tp]; ok {
			continue
		}
		delete(r.leaderlessParts, tp)
		r.mu.Lock() // AddPartitions writes r.partitions meanwhile
		pti := r.partitions[tp]
		r.mu.Unlock()
		if !st.reported.IsZero() && !pti.Revoked() {
			r.m.log.Info("partition has a leader again", "partition", tp.String(), "after", now.Sub(st.since).Truncate(time.Millisecond))
		}
	}
	if len(still) == 0 {
		return
	}
	reasons := noLeaderReasons(md, still)
	var quiet []string
	for _, tp := range still {
		reason := reasons[tp]
		st := r.leaderlessParts[tp]
		if st == nil {
			st = &leaderlessState{since: now}
			r.leaderlessParts[tp] = st
		}
		since := now.Sub(st.since)
		switch {
		case since < r.m.leaderlessGrace:
			quiet = append(quiet, tp.String())
			continue
		case st.reported.IsZero():
		case reason != st.lastReported && now.Sub(st.reported) >= r.m.leaderlessGrace:
		case now.Sub(st.reported) >= r.m.leaderlessRepeat:
		default:
			quiet = append(quiet, tp.String())
			continue
		}
		st.reported, st.lastReported = now, reason
		err := reason.err(tp, since, r.m.cfg.RefreshLeaderBackoff)
		r.m.log.Warn("partition has no leader", "partition", tp.String(), "error", err)
		r.report(err)
	}
	if len(quiet) > 0 {
		r.m.log.Debug("partitions have no leader yet", "partitions", quiet)
	}
}
