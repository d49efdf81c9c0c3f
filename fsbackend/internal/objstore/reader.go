package objstore

import (
	"context"
	"io"
	"io/fs"
	"sync/atomic"

	"github.com/stowage/stowage/fsbackend"
)

// reader is the fsbackend.Reader of FS.Open: an object of the size Head
// saw, each ReadAt one ranged Get of the part within the object, pinned to
// the version Head saw, under the context given to Open. ReadAt is safe
// for concurrent use; after Close, ReadAt and Close fail with
// fsbackend.ErrClosed.
type reader struct {
	f       *FS
	ctx     context.Context
	key     string
	version string
	size    int64
	closed  atomic.Bool
}

// Size is the object's length in bytes.
func (r *reader) Size() int64 { return r.size }

// Close ends the reader; a second Close returns fsbackend.ErrClosed.
func (r *reader) Close() error {
	if r.closed.Swap(true) {
		return fsbackend.ErrClosed
	}
	return nil
}

// ReadAt reads len(p) bytes at off with one Get of the part that lies
// within the object, and io.EOF when p reaches past its end (io.ReaderAt).
func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	if r.closed.Load() {
		return 0, fsbackend.ErrClosed
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: r.f.url(r.key), Err: fs.ErrInvalid}
	}
	if len(p) == 0 {
		return 0, nil
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.size-off)
	if err := r.f.read(r.ctx, r.key, r.version, p[:want], off); err != nil {
		return 0, err
	}
	if want < int64(len(p)) {
		return int(want), io.EOF
	}
	return int(want), nil
}
