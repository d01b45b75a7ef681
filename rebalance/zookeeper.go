package rebalance

import (
	"context"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ZooKeeper is the part of *zkutil.Session a Member uses. Paths are
// relative to the session's chroot.
type ZooKeeper interface {
	Get(ctx context.Context, path string) ([]byte, zkutil.Stat, error)
	GetW(ctx context.Context, path string) ([]byte, zkutil.Stat, <-chan zkutil.WatchEvent, error)
	Children(ctx context.Context, path string) ([]string, error)
	ChildrenW(ctx context.Context, path string) ([]string, <-chan zkutil.WatchEvent, error)
	Exists(ctx context.Context, path string) (bool, zkutil.Stat, error)
	ExistsW(ctx context.Context, path string) (bool, zkutil.Stat, <-chan zkutil.WatchEvent, error)
	CreateEphemeral(ctx context.Context, path string, data []byte) error
	CreatePersistent(ctx context.Context, path string, data []byte) error
	Set(ctx context.Context, path string, data []byte, version int32) (zkutil.Stat, error)
	EnsurePath(ctx context.Context, path string) error
	Delete(ctx context.Context, path string, version int32) error
	DeleteEphemeral(ctx context.Context, path string, version int32) error
	Multi(ctx context.Context, ops ...zkutil.Op) error
	WatchMark(path string) zkutil.WatchMark
	ID() int64
	AwaitLease(ctx context.Context, id int64) error
	Subscribe() (<-chan zkutil.SessionEvent, func())
}

var _ ZooKeeper = (*zkutil.Session)(nil)
