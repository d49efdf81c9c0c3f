package local

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/stowage/stowage/fsbackend"
)

// RemoveAll implements fsbackend.DirRemover: one recursive unlink of the
// directory's tree, then one sync of its parent, which makes the
// directory's removal, and with it every file below, durable. A symbolic
// link in the tree is removed, never followed.
func (f *FS) RemoveAll(ctx context.Context, dir string) error {
	return f.removeAll(ctx, dir, false)
}

// removeAll is RemoveAll; deferred, it syncs no directory.
func (f *FS) removeAll(ctx context.Context, dir string, deferred bool) error {
	p, err := f.path(dir)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if st, err := os.Lstat(p); err != nil {
		if errors.Is(notExist(err), fs.ErrNotExist) {
			return nil
		}
		return err
	} else if !st.IsDir() {
		return nil // a file, not a directory: nothing lies below it
	}
	// Forget the directories first, without holding dirMu through the
	// unlinking, which may take the disk a while: creates elsewhere in
	// the FS go on meanwhile. A directory made again below dir meanwhile
	// is found by mkdirSync's own check.
	f.dirMu.Lock()
	for d := range f.dirs {
		if d == p || strings.HasPrefix(d, p+string(filepath.Separator)) {
			delete(f.dirs, d)
		}
	}
	f.dirMu.Unlock()
	if err := os.RemoveAll(p); err != nil {
		return err
	}
	if deferred {
		return nil
	}
	return syncUp(filepath.Dir(p), f.root)
}

var _ fsbackend.DirRemover = (*FS)(nil)
