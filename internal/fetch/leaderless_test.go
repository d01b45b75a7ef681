package fetch

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

func TestNoLeaderReasons(t *testing.T) {
	md := &sarama.MetadataResponse{Topics: []*sarama.TopicMetadata{
		{Name: "denied", Err: sarama.ErrTopicAuthorizationFailed},
		{Name: "gone", Err: sarama.ErrUnknownTopicOrPartition},
		{Name: "t", Partitions: []*sarama.PartitionMetadata{
			{ID: 0, Leader: -1, Err: sarama.ErrLeaderNotAvailable},
			{ID: 1, Leader: -1},
			{ID: 2, Leader: 7},
		}},
	}}
	tp := func(topic string, p int32) zkutil.TopicPartition {
		return zkutil.TopicPartition{Topic: topic, Partition: p}
	}
	cases := []struct {
		tp   zkutil.TopicPartition
		code sarama.KError
		text string
	}{
		{tp("denied", 0), sarama.ErrTopicAuthorizationFailed, "metadata says TOPIC_AUTHORIZATION_FAILED"},
		{tp("gone", 3), sarama.ErrUnknownTopicOrPartition, "metadata says UNKNOWN_TOPIC_OR_PARTITION"},
		{tp("absent", 0), sarama.ErrUnknownTopicOrPartition, "the topic is missing from the metadata"},
		{tp("t", 0), sarama.ErrLeaderNotAvailable, "metadata says LEADER_NOT_AVAILABLE"},
		{tp("t", 1), sarama.ErrLeaderNotAvailable, "no leader elected"},
		{tp("t", 2), sarama.ErrNoError, "leader 7 is not a known broker"},
		{tp("t", 5), sarama.ErrUnknownTopicOrPartition, "the topic has 3 partitions"},
	}
	var tps []zkutil.TopicPartition
	for _, c := range cases {
		tps = append(tps, c.tp)
	}
	reasons := noLeaderReasons(md, tps)
	for _, c := range cases {
		r := reasons[c.tp]
		err := r.err(c.tp, 1500*time.Millisecond, 200*time.Millisecond)
		var perr *streamcore.PartitionError
		if !errors.As(err, &perr) || perr.Topic != c.tp.Topic || perr.Partition != c.tp.Partition {
			t.Errorf("%s: %v is not its PartitionError", c.tp, err)
		}
		if r.code != c.code || !errors.Is(err, ErrNoLeader) || c.code != sarama.ErrNoError && !errors.Is(err, c.code) {
			t.Errorf("%s: code %v, error %v; want %v", c.tp, r.code, err, c.code)
		}
		if msg := err.Error(); !strings.Contains(msg, c.text) || !strings.Contains(msg, "for 2s") || !strings.Contains(msg, "retrying every 200ms") {
			t.Errorf("%s: %q lacks %q, the time without leader or the backoff", c.tp, msg, c.text)
		}
	}
	if got := errorName(sarama.KError(999)); got != "error code 999" {
		t.Errorf("unnamed code: %q", got)
	}
}
