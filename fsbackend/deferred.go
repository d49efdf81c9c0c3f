package fsbackend

import "context"

// DirSyncer is an optional interface of back ends on which a change to a
// directory's entries (a file created and finished, a Rename, a Remove)
// becomes durable only when that directory is synced: the local disk.
// Every FS method pays for that sync itself before it returns. A caller
// that changes several entries of one directory at a time can make the
// changes through the Deferred view and pay for one SyncDir instead.
//
// Back ends without it make every change durable when its call returns
// (HDFS: each change is one NameNode transaction; object stores: each is
// one completed request); Deferred below gives such an FS unchanged.
type DirSyncer interface {
	// Deferred returns a view of the same files on which nothing is made
	// durable implicitly: a Writer's Close neither syncs its bytes nor its
	// directory entry (call Writer.Sync before Close for the bytes, which
	// then syncs only them), Rename and Remove do not sync the directories
	// they change, and Remove leaves emptied directories in place.
	// Everything is visible to readers at once, exactly as through the FS
	// itself; only durability waits for SyncDir. Directories that Create
	// or Rename make on the way are still synced into their parents, once.
	// Closing the view does nothing.
	Deferred() FS
	// SyncDir makes durable every change made so far to the entries of
	// the directory dir ("" is the root), through the FS or its Deferred
	// view: files created in it (with the bytes a Writer.Sync made
	// durable), renamed into or out of it, removed from it. A missing dir
	// gives an error matching ErrNotExist.
	SyncDir(ctx context.Context, dir string) error
}

// Deferred returns f's Deferred view and its SyncDir when f is a
// DirSyncer, and ok true. Otherwise it returns f itself, a SyncDir that
// does nothing (every change on f is durable when its call returns), and
// ok false; Writer.Sync may then be unsupported, so callers check ok
// before they rely on it.
func Deferred(f FS) (view FS, syncDir func(ctx context.Context, dir string) error, ok bool) {
	if d, is := f.(DirSyncer); is {
		return d.Deferred(), d.SyncDir, true
	}
	return f, func(context.Context, string) error { return nil }, false
}
