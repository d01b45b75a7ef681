package main

import (
	"context"
	"fmt"

	"github.com/zkconsumer/zkconsumer/internal/groups"
)

// list prints one group per line, sorted.
func (c *command) list(ctx context.Context) error {
	ctx, cancel := c.step(ctx)
	defer cancel()
	names, err := groups.ListGroups(ctx, c.zk)
	if err != nil {
		return err
	}
	for _, g := range names {
		if _, err := fmt.Fprintln(c.stdout, g); err != nil {
			return err
		}
	}
	return nil
}
