package fsbackend

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"
)

// FS is the storage contract every back end implements. Names are
// slash-separated paths relative to the back end's root, without a leading
// slash, "." or ".." elements (see ValidName). Directories are implicit:
// Create makes any missing parents, and List walks below a prefix.
//
// An FS is safe for concurrent use by multiple goroutines.
type FS interface {
	// Create creates a new file for writing and fails with an error
	// matching fs.ErrExist if name already exists (on back ends without
	// ConditionalCreate the check is best effort: see Capabilities).
	// Nothing written is durable or guaranteed visible to readers until
	// the Writer's Sync (DurableAppend back ends) or Close returns nil.
	Create(ctx context.Context, name string) (Writer, error)

	// Open opens a finished file for reading. A missing file is an error
	// matching fs.ErrNotExist.
	Open(ctx context.Context, name string) (Reader, error)

	// List returns every file whose name lies below the directory dir
	// ("" for the whole root), at any depth, sorted by name. It never
	// returns directories. A missing dir gives an empty list, not an error.
	List(ctx context.Context, dir string) ([]FileInfo, error)

	// Stat describes one file; a missing file matches fs.ErrNotExist.
	Stat(ctx context.Context, name string) (FileInfo, error)

	// Remove deletes one file. The removal is durable when Remove returns
	// nil. A missing file matches fs.ErrNotExist. Back ends remove empty
	// parent directories where they have them, at their discretion.
	Remove(ctx context.Context, name string) error

	// Rename moves a finished file to newName, replacing newName if it
	// exists. It is atomic (readers see the old or the new file, never
	// neither) only where Capabilities reports AtomicRename; elsewhere it
	// is copy then delete. The rename is durable when it returns nil.
	Rename(ctx context.Context, oldName, newName string) error

	// Capabilities says what this back end guarantees beyond the minimum.
	Capabilities() Capabilities

	// Close releases clients and connections. Files must be closed first.
	Close() error
}

// Capabilities are the guarantees that only some back ends give.
type Capabilities struct {
	// DurableAppend: Writer.Sync makes every byte written so far durable
	// while the file stays open (fdatasync on local disk). Without it Sync
	// returns ErrUnsupported and only Close makes data durable.
	DurableAppend bool
	// SyncOpen: Writer.Sync makes every byte written so far durable while
	// the file stays open, as DurableAppend does, but another reader may
	// see those bytes only once the file is closed: a file whose writer
	// died is made whole by Recoverer.Recover (HDFS: hsync, and lease
	// recovery). Back ends with DurableAppend do not set it.
	SyncOpen bool
	// AtomicRename: Rename replaces the target atomically.
	AtomicRename bool
	// ConditionalCreate: Create's exists check and the creation are one
	// atomic step on the server, so two writers can never both create, or
	// overwrite, the same name (O_EXCL, HDFS create, S3 If-None-Match,
	// OSS forbid-overwrite, GCS generation match).
	ConditionalCreate bool
	// AtomicRemoveAll: the back end's DirRemover deletes a directory's
	// whole tree in one atomic step, so that readers see every file below
	// it or none, and an error or a crash leaves all of them or none
	// (HDFS: one recursive delete, one NameNode transaction). Callers
	// then need no marker of their own to make a deletion read as
	// complete at once. Without it a stopped RemoveAll may leave any of
	// the files (the local disk unlinks them one by one, object stores
	// delete them in batches).
	AtomicRemoveAll bool
}

// Writer writes one new file. It is not safe for concurrent use.
type Writer interface {
	io.Writer
	// Sync makes everything written so far durable; ErrUnsupported on
	// back ends without DurableAppend or SyncOpen.
	Sync() error
	// Close finishes the file. When it returns nil the whole file is
	// durable and visible to Open and List. After an error the file may
	// or may not exist; the caller should Abort or Remove it.
	Close() error
	// Abort gives up on the file: it is removed if it was created, and
	// nothing of it becomes visible where the back end allows that. After
	// a successful Close, Abort does nothing: the file is finished (so a
	// deferred Abort is harmless).
	Abort() error
}

// Reader reads one finished file. It is safe for concurrent ReadAt calls.
type Reader interface {
	io.ReaderAt
	io.Closer
	// Size is the file's length in bytes.
	Size() int64
}

// FileInfo describes one file.
type FileInfo struct {
	Name    string // full name relative to the root
	Size    int64
	ModTime time.Time
}

// Truncater is an optional interface of Writers on DurableAppend back ends:
// it cuts the file being written back to size, so that a batch whose Sync
// failed leaves nothing behind.
type Truncater interface {
	Truncate(size int64) error
}

// ZeroAheader is an optional interface of Writers on DurableAppend back
// ends. ZeroAhead(n) has the writer keep at least n bytes of zeros written
// past what was written, extended as writes reach them, so that a Sync
// after a write that lands in them changes no file size: on ext4 and XFS
// such a sync flushes data alone, without a journal commit (etcd and
// PostgreSQL prepare their logs the same way). Close and Truncate cut the
// zeros off, so a finished file holds only what was written; a file whose
// writer died may end in them (record.Scanner takes zeros that run to the
// end of its buffer as the end).
type ZeroAheader interface {
	ZeroAhead(n int64)
}

// Errors shared by every back end. Back ends wrap them so errors.Is works;
// errors from the underlying client are wrapped in *fs.PathError.
var (
	// ErrUnsupported is returned for an operation the back end cannot do.
	ErrUnsupported = errors.New("stowage/fsbackend: operation not supported by this back end")
	// ErrInvalidName is returned for a name that is empty, absolute, or
	// holds ".", ".." or NUL elements.
	ErrInvalidName = errors.New("stowage/fsbackend: invalid file name")
	// ErrClosed is returned by any call on a closed FS or file.
	ErrClosed = errors.New("stowage/fsbackend: closed")
)

// Re-exported io/fs sentinels, for callers that import only this package.
var (
	ErrExist    = fs.ErrExist
	ErrNotExist = fs.ErrNotExist
)

// ReadFile reads the whole named file.
func ReadFile(ctx context.Context, f FS, name string) ([]byte, error) {
	r, err := f.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	buf := make([]byte, r.Size())
	n, err := r.ReadAt(buf, 0)
	if err != nil && !(errors.Is(err, io.EOF) && n == len(buf)) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return buf[:n], nil
}

// WriteFile creates name exclusively, writes data and closes it, so that
// when it returns nil the file is durable. A failed write is aborted.
func WriteFile(ctx context.Context, f FS, name string, data []byte) error {
	w, err := f.Create(ctx, name)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Abort()
		return err
	}
	if err := w.Close(); err != nil {
		_ = w.Abort()
		return err
	}
	return nil
}

// WriteFileAtomic makes name hold data, replacing any earlier file, such
// that a reader sees either the old whole file or the new whole file. It
// writes name+".tmp-"+suffix and renames it where rename is atomic;
// otherwise (object stores, where one PUT is already atomic) it removes the
// old file and writes the new one directly.
func WriteFileAtomic(ctx context.Context, f FS, name, suffix string, data []byte) error {
	if !f.Capabilities().AtomicRename {
		if err := f.Remove(ctx, name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return WriteFile(ctx, f, name, data)
	}
	tmp := name + ".tmp-" + suffix
	if err := WriteFile(ctx, f, tmp, data); err != nil {
		return err
	}
	if err := f.Rename(ctx, tmp, name); err != nil {
		_ = f.Remove(ctx, tmp)
		return err
	}
	return nil
}
