package fsbackend

import (
	"context"
	"errors"
)

// DirRemover is an optional interface of back ends that delete every file
// below a directory in one call, or in a few batched requests: the local
// disk (one recursive unlink of the tree and one sync of its parent),
// HDFS (one recursive delete at the NameNode), object stores (a listing
// of the prefix and batched deletes where the store has them).
type DirRemover interface {
	// RemoveAll deletes every file below dir, at any depth, and the
	// directories themselves where the back end has them. A missing dir
	// is not an error; a file named dir is left (nothing lies below it).
	// The removal is durable when RemoveAll returns nil (on a Deferred
	// view: once the parent of dir is synced). It is atomic only where
	// Capabilities reports AtomicRemoveAll; elsewhere, stopped midway (an
	// error, a crash), any of the files may be left, in no particular
	// order, so callers that need a deletion to read as complete at once
	// mark it first.
	RemoveAll(ctx context.Context, dir string) error
}

// RemoveAll deletes every file below dir (which must not be the root)
// through f's DirRemover when it has one, else by listing dir and
// removing each file. Files that vanish meanwhile are no error.
func RemoveAll(ctx context.Context, f FS, dir string) error {
	if err := ValidName(dir); err != nil {
		return err
	}
	if d, ok := f.(DirRemover); ok {
		return d.RemoveAll(ctx, dir)
	}
	return RemoveEach(ctx, f, dir)
}

// RemovesAtomically reports whether RemoveAll on f deletes a directory's
// tree in one atomic step: f has a DirRemover and reports AtomicRemoveAll.
func RemovesAtomically(f FS) bool {
	_, ok := f.(DirRemover)
	return ok && f.Capabilities().AtomicRemoveAll
}

// RemoveEach deletes every file below dir one Remove each, after one
// List: RemoveAll on a back end without a DirRemover, and the way for a
// wrapper to delete through its own Remove.
func RemoveEach(ctx context.Context, f FS, dir string) error {
	fis, err := f.List(ctx, dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, fi := range fis {
		if err := f.Remove(ctx, fi.Name); err != nil && !errors.Is(err, ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
