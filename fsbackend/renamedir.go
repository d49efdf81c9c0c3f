package fsbackend

import "context"

// DirRenamer is an optional interface of back ends that move a directory,
// with everything below it, in one atomic step: the local disk (one
// rename(2)). A caller can so take a whole tree out of sight at once and
// delete it at leisure.
type DirRenamer interface {
	// RenameDir moves the directory dir and its tree to newDir, which
	// must not exist; missing parents of newDir are made. Readers see
	// the tree under one name or the other. The move is durable when
	// RenameDir returns nil (both parents synced), on a Deferred view
	// too. A missing dir, or a file named dir, matches ErrNotExist.
	RenameDir(ctx context.Context, dir, newDir string) error
}
