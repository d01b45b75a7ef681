package main

import (
	"context"
	"errors"
)

// resetOffsets is built on the reset planner of internal/groups.
func (c *command) resetOffsets(ctx context.Context) error {
	return errors.New("--reset-offsets is not available yet")
}

// export writes a group's committed offsets to a file.
func (c *command) export(ctx context.Context) error {
	return errors.New("--export is not available yet")
}
