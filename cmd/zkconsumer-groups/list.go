package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zkconsumer/zkconsumer/internal/groups"
)

// list prints one group per line, sorted; with --state, each group with
// its state, only those in the states --state names if it names any.
func (c *command) list(ctx context.Context) error {
	ctx, cancel := c.step(ctx)
	defer cancel()
	names, err := groups.ListGroups(ctx, c.zk)
	if err != nil {
		return err
	}
	if !c.o.State {
		for _, g := range names {
			if _, err := fmt.Fprintln(c.stdout, g); err != nil {
				return err
			}
		}
		return nil
	}
	want, err := parseStates(c.o.StateFilter)
	if err != nil {
		return err
	}
	var listed []groups.Listing
	for _, g := range names {
		d, err := groups.DescribeGroup(ctx, c.zk, nil, g)
		if errors.Is(err, groups.ErrUnknownGroup) {
			continue // deleted since it was listed
		}
		if err != nil {
			return err
		}
		for _, p := range d.Problems {
			c.warnf("group '%s': %v", g, p)
		}
		if len(want) == 0 || want[d.State] {
			listed = append(listed, groups.Listing{Group: g, State: d.State})
		}
	}
	return groups.PrintListing(c.stdout, listed)
}

// parseStates parses the argument of --list --state: states separated by
// commas, matched without regard to case. Empty means every state.
func parseStates(arg string) (map[string]bool, error) {
	want := map[string]bool{}
	if strings.TrimSpace(arg) == "" {
		return want, nil
	}
	for _, s := range strings.Split(arg, ",") {
		s = strings.TrimSpace(s)
		found := false
		for _, st := range groups.States {
			if strings.EqualFold(s, st) {
				want[st] = true
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("--state %q: %q is not a state of a ZooKeeper group; the states are %s",
				arg, s, strings.Join(groups.States, ", "))
		}
	}
	return want, nil
}
