package objstore

import (
	"io"
	"io/fs"
	"sync/atomic"

	"github.com/stowage/stowage/fsbackend"
)

// FetchFunc reads len(p) bytes of an object at off into p, with one ranged
// request (retried as the back end retries), and returns how many bytes it
// read. Reader calls it only with a non-empty p that ends within the
// object, possibly from several goroutines at once.
type FetchFunc func(p []byte, off int64) (int, error)

// Reader is an fsbackend.Reader over one object of known size whose bytes
// are fetched by ranged reads. ReadAt is safe for concurrent use; after
// Close, ReadAt and Close fail with fsbackend.ErrClosed.
type Reader struct {
	path   string
	size   int64
	fetch  FetchFunc
	closed atomic.Bool
}

// NewReader returns a Reader of an object of size bytes. path names the
// object in errors the Reader makes itself (a negative offset).
func NewReader(path string, size int64, fetch FetchFunc) *Reader {
	return &Reader{path: path, size: size, fetch: fetch}
}

// Size is the object's length in bytes.
func (r *Reader) Size() int64 { return r.size }

// Close ends the Reader; a second Close returns fsbackend.ErrClosed.
func (r *Reader) Close() error {
	if r.closed.Swap(true) {
		return fsbackend.ErrClosed
	}
	return nil
}

// ReadAt reads len(p) bytes at off with one fetch of the part that lies
// within the object, and io.EOF when p reaches past its end (io.ReaderAt).
// The fetch's error is returned as it is.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	if r.closed.Load() {
		return 0, fsbackend.ErrClosed
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: r.path, Err: fs.ErrInvalid}
	}
	if len(p) == 0 {
		return 0, nil
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.size-off)
	n, err := r.fetch(p[:want], off)
	if err != nil {
		return n, err
	}
	if want < int64(len(p)) {
		return n, io.EOF
	}
	return n, nil
}

var _ fsbackend.Reader = (*Reader)(nil)
