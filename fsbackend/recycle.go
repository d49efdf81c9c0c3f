package fsbackend

import "context"

// Recycler is an optional interface of back ends on which a finished file
// that is no longer needed can be written over in place instead of being
// deleted while a new one is created: the local disk, where deleting a
// synced file frees its blocks (and, on file systems mounted with
// discard, trims them) and a new file allocates others, both of which
// cost the disk more than writing over blocks it already holds.
type Recycler interface {
	// Recycle renames the finished file oldName to newName, which must
	// not exist (an error matching ErrExist if it does), and returns a
	// Writer that writes it over from its start, as Create's would: what
	// the Writer's Sync or Close makes durable is exactly the bytes
	// written (the file is cut to their length first). Until then the
	// file holds old bytes as well, so callers recycle only into names
	// that nothing reads before it is finished (a temporary renamed into
	// place). A missing oldName is an error matching ErrNotExist; on a
	// file system that cannot rename without replacing, ErrUnsupported.
	Recycle(ctx context.Context, oldName, newName string) (Writer, error)
}
