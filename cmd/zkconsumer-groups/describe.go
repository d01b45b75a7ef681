package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkconsumer/zkconsumer/internal/groups"
)

// errIncomplete is returned when a description was printed but parts of it
// could not be read; the warnings on stderr say which.
var errIncomplete = errors.New("the description is incomplete, see the warnings above")

// describe prints the offsets, members or state of one group or of all.
func (c *command) describe(ctx context.Context) error {
	names := []string{c.o.Group}
	if c.o.AllGroups {
		lctx, cancel := c.step(ctx)
		var err error
		names, err = groups.ListGroups(lctx, c.zk)
		cancel()
		if err != nil {
			return err
		}
	}
	lo := groups.NewLogOffsets(c.zk, c.o.Timeout, c.sec)
	defer lo.Close()
	incomplete := false
	for _, g := range names {
		if c.o.AllGroups {
			fmt.Fprintf(c.stdout, "\nGroup: %s\n", g)
		}
		dctx, cancel := c.step(ctx)
		d, err := groups.DescribeGroup(dctx, c.zk, lo, g)
		cancel()
		if errors.Is(err, groups.ErrUnknownGroup) && !c.o.AllGroups {
			return fmt.Errorf("The consumer group '%s' does not exist.", g)
		}
		if err != nil {
			return err
		}
		switch {
		case c.o.Members && c.o.Verbose:
			err = groups.PrintMembersVerbose(c.stdout, d)
		case c.o.Members:
			err = groups.PrintMembers(c.stdout, d)
		case c.o.State:
			err = groups.PrintState(c.stdout, d)
		case c.o.Verbose:
			err = groups.PrintOffsetsVerbose(c.stdout, d)
		default:
			err = groups.PrintOffsets(c.stdout, d)
		}
		if err != nil {
			return err
		}
		for _, p := range d.Problems {
			c.warnf("%v", p)
			incomplete = true
		}
	}
	if incomplete {
		return errIncomplete
	}
	return nil
}
