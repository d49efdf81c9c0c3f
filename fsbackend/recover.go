package fsbackend

import "context"

// Recoverer is an optional interface of back ends with
// Capabilities.SyncOpen, where a file whose writer died stays open and
// shows readers only part of what the writer synced (HDFS: the file is
// under construction until its lease is recovered).
type Recoverer interface {
	// Recover makes a file whose writer left it open whole: it ends the
	// writer's hold on it (a writer still alive then fails its next Sync
	// or Close) and waits until the file is closed with every byte the
	// writer synced. A closed file is left as it is. It returns nil once
	// the file is closed; a missing file matches fs.ErrNotExist.
	Recover(ctx context.Context, name string) error
}

// UnfinishedReader is an optional interface of Readers on back ends with
// Capabilities.SyncOpen.
type UnfinishedReader interface {
	// Unfinished reports whether the file was still open for writing
	// when it was opened for reading: Size may then be short of what its
	// writer synced (see Recoverer).
	Unfinished() bool
}

// Recover calls f's Recoverer, or does nothing where f has none.
func Recover(ctx context.Context, f FS, name string) error {
	if r, ok := f.(Recoverer); ok {
		return r.Recover(ctx, name)
	}
	return nil
}
