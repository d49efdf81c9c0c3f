package local

import (
	"context"

	"github.com/stowage/stowage/fsbackend"
)

// Deferred implements fsbackend.DirSyncer: a view of the same directory
// whose writers sync nothing at Close (Writer.Sync is fdatasync alone),
// whose Rename and Remove sync no directory, and whose Remove leaves
// emptied directories in place. SyncDir makes the entries durable.
func (f *FS) Deferred() fsbackend.FS { return deferredFS{f} }

// SyncDir implements fsbackend.DirSyncer: one fsync of the directory dir.
func (f *FS) SyncDir(ctx context.Context, dir string) error {
	if f.closed.Load() {
		return fsbackend.ErrClosed
	}
	if err := fsbackend.ValidDir(dir); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p := f.root
	if dir != "" {
		p, _ = f.path(dir)
	}
	return notExist(syncDir(p))
}

// deferredFS is the Deferred view. Reads go to the FS unchanged.
type deferredFS struct{ *FS }

func (d deferredFS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	return d.create(ctx, name, true)
}

func (d deferredFS) Rename(ctx context.Context, oldName, newName string) error {
	return d.rename(oldName, newName, true)
}

func (d deferredFS) Remove(ctx context.Context, name string) error {
	return d.remove(name, true)
}

// Close does nothing: the view shares the FS, whose owner closes it.
func (deferredFS) Close() error { return nil }

var (
	_ fsbackend.DirSyncer = (*FS)(nil)
	_ fsbackend.DirSyncer = deferredFS{}
)

// RemoveAll implements fsbackend.DirRemover on the view: the tree is
// unlinked and its parent is not synced.
func (d deferredFS) RemoveAll(ctx context.Context, dir string) error {
	return d.removeAll(ctx, dir, true)
}

var _ fsbackend.DirRemover = deferredFS{}
