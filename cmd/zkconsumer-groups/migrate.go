package main

import (
	"context"
	"errors"
	"io"
)

func runMigrate(ctx context.Context, o *options, stdout io.Writer) error {
	return errors.New("not implemented yet")
}
