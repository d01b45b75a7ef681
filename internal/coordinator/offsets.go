package coordinator

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/grouperr"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// OffsetFetchRequest is an OffsetFetch of tps for group at version.
func OffsetFetchRequest(version int16, group string, tps []zkutil.TopicPartition) *sarama.OffsetFetchRequest {
	req := &sarama.OffsetFetchRequest{Version: version, ConsumerGroup: group}
	for _, tp := range tps {
		req.AddPartition(tp.Topic, tp.Partition)
	}
	return req
}

// ReadOffsets reads an OffsetFetch answer for tps, the one reading of
// every client of the coordinator: the committed offset of each
// partition, zkutil.NoOffset where the group has none (also a partition
// the answer leaves out). A coordinator error, of the whole answer or of
// a partition (versions below 2 report them per partition; they concern
// the whole request), is err, for the caller to retry
// (grouperr.Retriable) or give up on; the other errors of single
// partitions are in failed, and those partitions are left out of
// offsets. Whether "none" is true is for internal/offsetfetch to
// confirm.
func ReadOffsets(resp *sarama.OffsetFetchResponse, tps []zkutil.TopicPartition) (offsets map[zkutil.TopicPartition]int64, failed map[zkutil.TopicPartition]sarama.KError, err error) {
	if resp.Err != sarama.ErrNoError {
		return nil, nil, resp.Err
	}
	offsets = make(map[zkutil.TopicPartition]int64, len(tps))
	for _, tp := range tps {
		blk := resp.GetBlock(tp.Topic, tp.Partition)
		switch {
		case blk == nil:
			offsets[tp] = zkutil.NoOffset
		case blk.Err == sarama.ErrNoError:
			offsets[tp] = max(blk.Offset, zkutil.NoOffset) // -1 when the group has none
		case grouperr.Retriable(blk.Err):
			return nil, nil, blk.Err
		default:
			if failed == nil {
				failed = map[zkutil.TopicPartition]sarama.KError{}
			}
			failed[tp] = blk.Err
		}
	}
	return offsets, failed, nil
}

// PartitionErrors joins the errors of single partitions that ReadOffsets
// returned in failed, each naming its partition, in the order of tps; nil
// for none.
func PartitionErrors(tps []zkutil.TopicPartition, failed map[zkutil.TopicPartition]sarama.KError) error {
	var errs []error
	for _, tp := range tps {
		if kerr, ok := failed[tp]; ok {
			errs = append(errs, fmt.Errorf("%s: %w", tp, kerr))
		}
	}
	return errors.Join(errs...)
}
