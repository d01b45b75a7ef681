package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/groups"
)

// resetOffsets plans a reset of one group, prints the plan and, with
// --execute, writes it. Everything is read and checked before anything is
// written.
func (c *command) resetOffsets(ctx context.Context) error {
	spec, err := c.resetSpec()
	if err != nil {
		return err
	}
	scope, err := c.resetScope()
	if err != nil {
		return err
	}
	lo := groups.NewLogOffsets(c.zk, c.o.Timeout, c.sec)
	defer lo.Close()
	pctx, cancel := c.step(ctx)
	plan, err := groups.PlanGroupReset(pctx, c.zk, lo, c.o.Group, scope, spec, time.Now())
	cancel()
	if errors.Is(err, groups.ErrGroupActive) {
		return fmt.Errorf("Consumer group '%s' offsets cannot be reset while it has registered members: %w", c.o.Group, err)
	}
	if err != nil {
		return err
	}
	if c.o.Export {
		offs := make([]groups.PartitionOffset, len(plan))
		for i, p := range plan {
			offs[i] = groups.PartitionOffset{TopicPartition: p.TopicPartition, Offset: p.Target}
		}
		for _, n := range groups.Notes(plan) {
			c.warnf("%s", n)
		}
		if err := groups.WriteCSV(c.stdout, offs); err != nil {
			return err
		}
	} else if err := groups.PrintPlan(c.stdout, c.o.Group, plan); err != nil {
		return err
	}
	if !c.o.Execute {
		fmt.Fprintln(c.stderr, "Dry run: nothing was written. Add --execute to write these offsets.")
		return nil
	}
	wctx, cancel := c.step(ctx)
	defer cancel()
	if err := groups.CommitPlan(wctx, c.zk, c.o.Group, plan); errors.Is(err, groups.ErrGroupActive) {
		return fmt.Errorf("Consumer group '%s' offsets were not reset: a member registered meanwhile: %w", c.o.Group, err)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "Wrote the offsets of %d partition(s) of group '%s' to ZooKeeper.\n", len(plan), c.o.Group)
	return nil
}

// resetSpec turns the reset options into a ResetSpec.
func (c *command) resetSpec() (groups.ResetSpec, error) {
	o := c.o
	switch {
	case o.ToEarliest:
		return groups.ResetSpec{Mode: groups.ResetToEarliest}, nil
	case o.ToLatest:
		return groups.ResetSpec{Mode: groups.ResetToLatest}, nil
	case o.ToCurrent:
		return groups.ResetSpec{Mode: groups.ResetToCurrent}, nil
	case o.has("to-offset"):
		return groups.ResetSpec{Mode: groups.ResetToOffset, Offset: o.ToOffset}, nil
	case o.has("shift-by"):
		return groups.ResetSpec{Mode: groups.ResetShiftBy, Shift: o.ShiftBy}, nil
	case o.has("to-datetime"):
		t, err := groups.ParseDatetime(o.ToDatetime)
		if err != nil {
			return groups.ResetSpec{}, fmt.Errorf("--to-datetime %q: %w", o.ToDatetime, err)
		}
		return groups.ResetSpec{Mode: groups.ResetToDatetime, Time: t}, nil
	case o.has("by-duration"):
		d, err := groups.ParseISODuration(o.ByDuration)
		if err != nil {
			return groups.ResetSpec{}, fmt.Errorf("--by-duration %q: %w", o.ByDuration, err)
		}
		return groups.ResetSpec{Mode: groups.ResetByDuration, Duration: d}, nil
	default:
		file, err := c.readOffsetsFile(o.FromFile)
		if err != nil {
			return groups.ResetSpec{}, err
		}
		return groups.ResetSpec{Mode: groups.ResetFromFile, File: file}, nil
	}
}

// readOffsetsFile reads an offsets file in either format and returns the
// entries of the group being reset; entries of other groups (zk format or
// 4-column CSV) are skipped with a warning.
func (c *command) readOffsetsFile(path string) (map[groups.TopicPartition]int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--from-file: %w", err)
	}
	format, err := groups.DetectFormat(data)
	if err != nil {
		return nil, fmt.Errorf("--from-file %s: %w", path, err)
	}
	var offs []groups.PartitionOffset
	if format == groups.FormatZk {
		offs, err = groups.ReadZkOffsets(bytes.NewReader(data))
	} else {
		offs, err = groups.ReadCSV(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("--from-file %s (%s format): nothing was written: %w", path, format, err)
	}
	others := map[string]int{}
	for _, po := range offs {
		if po.Group != "" && po.Group != c.o.Group {
			others[po.Group]++
		}
	}
	for _, g := range slices.Sorted(maps.Keys(others)) {
		c.warnf("--from-file %s: skipping %d offset(s) of group '%s'", path, others[g], g)
	}
	return groups.FileForGroup(offs, c.o.Group), nil
}

// resetScope parses --all-topics and --topic topic[:p,p...].
func (c *command) resetScope() (groups.ResetScope, error) {
	return parseResetScope(c.o.AllTopics, c.o.Topics)
}

// parseResetScope parses --all-topics and the --topic values
// topic[:p,p...]; check calls it too, so that a bad value is a usage error.
func parseResetScope(allTopics bool, topics []string) (groups.ResetScope, error) {
	scope := groups.ResetScope{AllTopics: allTopics, Topics: map[string][]int32{}}
	for _, t := range topics {
		topic, list, hasParts := strings.Cut(t, ":")
		if topic == "" {
			return scope, fmt.Errorf("--topic %q: empty topic", t)
		}
		if !hasParts {
			scope.Topics[topic] = nil
			continue
		}
		for _, s := range strings.Split(list, ",") {
			p, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
			if err != nil || p < 0 {
				return scope, fmt.Errorf("--topic %q: %q is not a partition number", t, s)
			}
			scope.Topics[topic] = append(scope.Topics[topic], int32(p))
		}
	}
	return scope, nil
}
