package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// offsetsFile records the committed offsets as the driver saw them change.
const offsetsFile = "offsets.jsonl"

// OffsetRecord is one observed change of a committed offset in ZooKeeper.
type OffsetRecord struct {
	// Mtime is when ZooKeeper wrote the value (millisecond precision, in
	// Unix nanoseconds); Seen when the driver read it.
	Mtime     int64  `json:"mtime"`
	Seen      int64  `json:"seen"`
	Topic     string `json:"t"`
	Partition int32  `json:"p"`
	Offset    int64  `json:"o"`
	Version   int32  `json:"v"`
}

// Regression is a committed offset that went backwards: a later commit
// stored a smaller offset than an earlier one. The consumers then deliver
// the messages in between again.
type Regression struct {
	Partition string
	From, To  int64
	At        int64 // when ZooKeeper stored To
}

// offsetWatcher polls the group's committed offsets and appends every
// change to offsets.jsonl.
type offsetWatcher struct {
	zk     *zkutil.Session
	group  string
	topics func() []topicInfo
	out    *os.File
	seen   map[topicPartition]int32 // version last seen
}

// run polls every 250 ms until ctx ends. Readings that fail (ZooKeeper
// paused or restarting) are skipped.
func (w *offsetWatcher) run(ctx context.Context) {
	for ctx.Err() == nil {
		w.poll(ctx)
		sleep(ctx, 250*time.Millisecond)
	}
}

func (w *offsetWatcher) poll(ctx context.Context) {
	var lines []byte
	for _, t := range w.topics() {
		for p := range t.Partitions {
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			path := zkutil.OffsetPath(w.group, t.Name, int32(p))
			data, st, err := w.zk.Get(rctx, path)
			cancel()
			if err != nil {
				if !errors.Is(err, zkutil.ErrNoNode) && ctx.Err() == nil {
					return // ZooKeeper is unavailable: try again later
				}
				continue
			}
			tp := topicPartition{t.Name, int32(p)}
			if v, ok := w.seen[tp]; ok && v == st.Version {
				continue
			}
			w.seen[tp] = st.Version
			off, err := zkutil.DecodeOffset(path, data)
			if err != nil {
				continue
			}
			rec := OffsetRecord{Mtime: st.Mtime.UnixNano(), Seen: time.Now().UnixNano(),
				Topic: t.Name, Partition: int32(p), Offset: off, Version: st.Version}
			b, _ := json.Marshal(rec)
			lines = append(append(lines, b...), '\n')
		}
	}
	if len(lines) > 0 {
		_, _ = w.out.Write(lines)
	}
}

// loadOffsets reads offsets.jsonl and finds the regressions.
func (v *verifier) loadOffsets() error {
	var recs []OffsetRecord
	err := readJSONLines(v.path(offsetsFile), &recs)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	byTP := map[topicPartition][]OffsetRecord{}
	for _, r := range recs {
		tp := topicPartition{r.Topic, r.Partition}
		byTP[tp] = append(byTP[tp], r)
	}
	for _, tp := range slices.SortedFunc(func(yield func(topicPartition) bool) {
		for tp := range byTP {
			if !yield(tp) {
				return
			}
		}
	}, compareTP) {
		rs := byTP[tp]
		slices.SortFunc(rs, func(a, b OffsetRecord) int { return int(a.Version - b.Version) })
		v.commits[tp] = rs
		for i := 1; i < len(rs); i++ {
			if rs[i].Offset < rs[i-1].Offset {
				v.res.Regressions = append(v.res.Regressions, Regression{
					Partition: tp.String(), From: rs[i-1].Offset, To: rs[i].Offset, At: rs[i].Mtime,
				})
				v.regress[tp] = append(v.regress[tp], v.res.Regressions[len(v.res.Regressions)-1])
			}
		}
	}
	return nil
}

// lastCommit returns the offset of tp committed last before to, as
// observed; ok is false when no commit of tp was observed before to.
// ZooKeeper's mtime has millisecond precision, so a commit stamped in the
// millisecond of to may have come after it and does not count.
func (v *verifier) lastCommit(tp topicPartition, to int64) (offset int64, ok bool) {
	for _, r := range v.commits[tp] {
		if r.Mtime+int64(time.Millisecond) > to {
			break
		}
		offset, ok = r.Offset, true
	}
	return offset, ok
}

// regressedBetween reports whether the committed offset of tp went back to
// off or below at a time in (from, to].
func (v *verifier) regressedBetween(tp topicPartition, off, from, to int64) bool {
	for _, r := range v.regress[tp] {
		if r.At > from && r.At <= to && r.To <= off {
			return true
		}
	}
	return false
}

func (r Regression) String() string {
	return r.Partition + ": " + strconv.FormatInt(r.From, 10) + " -> " + strconv.FormatInt(r.To, 10) +
		fmt.Sprintf(" (%d messages back)", r.From-r.To)
}
