package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zkconsumer/zkconsumer/internal/groups"
)

// export writes a group's committed offsets as CSV (topic,partition,offset)
// or in Kafka's ExportZkOffsets format, to stdout or --output-file. The
// file is written to a temporary name and renamed, so that it is whole or
// absent.
func (c *command) export(ctx context.Context) error {
	ctx, cancel := c.step(ctx)
	defer cancel()
	offs, skipped, err := groups.ExportOffsets(ctx, c.zk, c.o.Group)
	if err != nil {
		return err
	}
	for _, tp := range skipped {
		c.warnf("%s has no committed offset (-1); not exported", tp)
	}
	var buf bytes.Buffer
	if c.o.Format == "zk" {
		err = groups.WriteZkOffsets(&buf, offs)
	} else {
		for i := range offs {
			offs[i].Group = ""
		}
		err = groups.WriteCSV(&buf, offs)
	}
	if err != nil {
		return err
	}
	if c.o.OutputFile == "" {
		_, err = c.stdout.Write(buf.Bytes())
		return err
	}
	if err := writeFileAtomic(c.o.OutputFile, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "Exported %d offset(s) of group '%s' to %s (%s format).\n", len(offs), c.o.Group, c.o.OutputFile, c.o.Format)
	return nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("--output-file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("--output-file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--output-file: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("--output-file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("--output-file: %w", err)
	}
	return nil
}
