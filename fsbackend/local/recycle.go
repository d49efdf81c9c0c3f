package local

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/stowage/stowage/fsbackend"
)

// Recycle implements fsbackend.Recycler: renameat2 with RENAME_NOREPLACE,
// then the file is opened for writing without truncation, so that its
// blocks are written over rather than freed and allocated again. Both
// directories are synced, as Rename syncs them.
func (f *FS) Recycle(ctx context.Context, oldName, newName string) (fsbackend.Writer, error) {
	return f.recycle(ctx, oldName, newName, false)
}

// recycle is Recycle; deferred, it syncs no directory and its writer is a
// Deferred view's.
func (f *FS) recycle(ctx context.Context, oldName, newName string, deferred bool) (fsbackend.Writer, error) {
	op, err := f.path(oldName)
	if err != nil {
		return nil, err
	}
	np, err := f.path(newName)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if st, err := os.Lstat(op); err != nil {
		return nil, notExist(err)
	} else if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "recycle", Path: op, Err: fs.ErrNotExist}
	}
	err = f.withParents(filepath.Dir(np), func() error {
		return unix.Renameat2(unix.AT_FDCWD, op, unix.AT_FDCWD, np, unix.RENAME_NOREPLACE)
	})
	switch {
	case errors.Is(err, unix.EEXIST):
		return nil, &fs.PathError{Op: "recycle", Path: np, Err: fs.ErrExist}
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS):
		return nil, &fs.PathError{Op: "recycle", Path: np, Err: fsbackend.ErrUnsupported}
	case err != nil:
		return nil, notExist(&fs.PathError{Op: "recycle", Path: op, Err: err})
	}
	file, err := os.OpenFile(np, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, err
	}
	w := &writer{f: file, dir: filepath.Dir(np), deferred: deferred, stale: st.Size()}
	if !deferred {
		if filepath.Dir(np) != filepath.Dir(op) {
			if err := syncUp(filepath.Dir(op), f.root); err != nil {
				file.Close()
				return nil, err
			}
		}
	}
	return w, nil
}

// Recycle implements fsbackend.Recycler on the view.
func (d deferredFS) Recycle(ctx context.Context, oldName, newName string) (fsbackend.Writer, error) {
	return d.recycle(ctx, oldName, newName, true)
}

var (
	_ fsbackend.Recycler = (*FS)(nil)
	_ fsbackend.Recycler = deferredFS{}
)
