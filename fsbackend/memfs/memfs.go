package memfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// file is one file's state. data and durable are never modified in place
// once shared: appends may extend data's backing array past len(data),
// which no snapshot sees, and Truncate copies.
type file struct {
	data    []byte // written
	durable []byte // as of the last Sync or Close
	synced  bool   // the directory entry is durable
	writing bool   // a writer is open
	mod     time.Time
}

// FS is a crash-simulating in-memory file system. It is safe for
// concurrent use.
type FS struct {
	mu     sync.Mutex
	files  map[string]*file
	gen    int // bumped by Crash; writers and readers of an older generation are dead
	closed bool
}

// New returns an empty FS.
func New() *FS { return &FS{files: map[string]*file{}} }

// Crash drops every byte that was not made durable, removes files whose
// creation was never made durable, and ends every open writer and reader:
// their later calls fail with fsbackend.ErrClosed.
func (f *FS) Crash() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++
	for name, fl := range f.files {
		if !fl.synced {
			delete(f.files, name)
			continue
		}
		fl.data = fl.durable[:len(fl.durable):len(fl.durable)]
		fl.writing = false
	}
}

// Clone returns an independent FS holding a copy of the written and the
// durable state of every file. Writers and readers of f are not carried
// over: a file being written in f is, in the clone, a file nobody writes
// to any more whose unsynced bytes a Crash of the clone drops.
func (f *FS) Clone() *FS {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := New()
	for name, fl := range f.files {
		cp := *fl
		cp.data = append([]byte(nil), fl.data...)
		cp.durable = append([]byte(nil), fl.durable...)
		cp.writing = false
		c.files[name] = &cp
	}
	return c
}

// Capabilities implements fsbackend.FS.
func (f *FS) Capabilities() fsbackend.Capabilities {
	// RemoveAll deletes under the one lock every call takes.
	return fsbackend.Capabilities{DurableAppend: true, AtomicRename: true, ConditionalCreate: true, AtomicRemoveAll: true}
}

func pathErr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

// lock validates names and takes the lock; on a nil error the caller must
// unlock.
func (f *FS) lock(names ...string) error {
	for _, n := range names {
		if err := fsbackend.ValidName(n); err != nil {
			return err
		}
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return fsbackend.ErrClosed
	}
	return nil
}

// parentIsFile reports whether a proper parent directory of name is a
// file, as a path like "f/x" with f a file cannot exist on a disk.
func (f *FS) parentIsFile(name string) bool {
	for i := strings.LastIndexByte(name, '/'); i > 0; i = strings.LastIndexByte(name[:i], '/') {
		if _, ok := f.files[name[:i]]; ok {
			return true
		}
	}
	return false
}

// isDir reports whether some file lies below name.
func (f *FS) isDir(name string) bool {
	for n := range f.files {
		if strings.HasPrefix(n, name+"/") {
			return true
		}
	}
	return false
}

// Create implements fsbackend.FS.
func (f *FS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := f.lock(name); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	if _, ok := f.files[name]; ok || f.isDir(name) {
		return nil, pathErr("create", name, fs.ErrExist)
	}
	if f.parentIsFile(name) {
		return nil, pathErr("create", name, errors.New("a parent directory is a file"))
	}
	fl := &file{writing: true, mod: time.Now()}
	f.files[name] = fl
	return &writer{fs: f, name: name, f: fl, gen: f.gen}, nil
}

// writer writes one file. It is not safe for concurrent use.
type writer struct {
	fs     *FS
	name   string
	f      *file
	gen    int
	closed bool // Close or Abort was called
	done   bool // Close returned nil
}

// live reports ErrClosed for a finished, aborted or crashed writer. The
// caller holds the lock.
func (w *writer) live() error {
	if w.closed || w.gen != w.fs.gen || w.fs.closed {
		return fsbackend.ErrClosed
	}
	return nil
}

func (w *writer) Write(p []byte) (int, error) {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.live(); err != nil {
		return 0, err
	}
	w.f.data = append(w.f.data, p...)
	w.f.mod = time.Now()
	return len(p), nil
}

func (w *writer) Sync() error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.live(); err != nil {
		return err
	}
	w.f.durable, w.f.synced = w.f.data[:len(w.f.data):len(w.f.data)], true
	return nil
}

// Truncate implements fsbackend.Truncater. It cuts the written bytes to
// size (or extends them with zeros); the durable bytes change only with
// the next Sync or Close.
func (w *writer) Truncate(size int64) error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.live(); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("truncate", w.name, fmt.Errorf("negative size %d", size))
	}
	data := make([]byte, size)
	copy(data, w.f.data)
	w.f.data = data
	w.f.mod = time.Now()
	return nil
}

func (w *writer) Close() error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.live(); err != nil {
		return err
	}
	w.closed, w.done = true, true
	w.f.durable, w.f.synced, w.f.writing = w.f.data[:len(w.f.data):len(w.f.data)], true, false
	return nil
}

// Abort removes the file, unless Close already finished it: a deferred
// Abort after a successful Close is harmless.
func (w *writer) Abort() error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if w.done {
		return nil
	}
	w.closed = true
	if fl, ok := w.fs.files[w.name]; ok && fl == w.f {
		delete(w.fs.files, w.name)
	}
	return nil
}

// reader reads a snapshot of a file taken at Open. It is safe for
// concurrent use.
type reader struct {
	fs   *FS
	name string
	data []byte
	gen  int
	mu   sync.Mutex
	done bool
}

func (r *reader) live() error {
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	r.fs.mu.Lock()
	crashed := r.gen != r.fs.gen
	r.fs.mu.Unlock()
	if done || crashed {
		return fsbackend.ErrClosed
	}
	return nil
}

func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	if err := r.live(); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", r.name, fmt.Errorf("negative offset %d", off))
	}
	if off >= int64(len(r.data)) {
		return 0, io.EOF
	}
	n := copy(p, r.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (r *reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return fsbackend.ErrClosed
	}
	r.done = true
	return nil
}

func (r *reader) Size() int64 { return int64(len(r.data)) }

// Open implements fsbackend.FS. The reader sees the bytes written when
// Open was called, including those of a file still being written.
func (f *FS) Open(ctx context.Context, name string) (fsbackend.Reader, error) {
	if err := f.lock(name); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	fl, ok := f.files[name]
	if !ok {
		return nil, pathErr("open", name, fs.ErrNotExist)
	}
	return &reader{fs: f, name: name, data: fl.data[:len(fl.data):len(fl.data)], gen: f.gen}, nil
}

// Stat implements fsbackend.FS.
func (f *FS) Stat(ctx context.Context, name string) (fsbackend.FileInfo, error) {
	if err := f.lock(name); err != nil {
		return fsbackend.FileInfo{}, err
	}
	defer f.mu.Unlock()
	fl, ok := f.files[name]
	if !ok {
		return fsbackend.FileInfo{}, pathErr("stat", name, fs.ErrNotExist)
	}
	return fsbackend.FileInfo{Name: name, Size: int64(len(fl.data)), ModTime: fl.mod}, nil
}

// List implements fsbackend.FS.
func (f *FS) List(ctx context.Context, dir string) ([]fsbackend.FileInfo, error) {
	if err := fsbackend.ValidDir(dir); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, fsbackend.ErrClosed
	}
	out := []fsbackend.FileInfo{}
	for name, fl := range f.files {
		if dir == "" || strings.HasPrefix(name, dir+"/") {
			out = append(out, fsbackend.FileInfo{Name: name, Size: int64(len(fl.data)), ModTime: fl.mod})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Remove implements fsbackend.FS.
func (f *FS) Remove(ctx context.Context, name string) error {
	if err := f.lock(name); err != nil {
		return err
	}
	defer f.mu.Unlock()
	if _, ok := f.files[name]; !ok {
		return pathErr("remove", name, fs.ErrNotExist)
	}
	delete(f.files, name)
	return nil
}

// Rename implements fsbackend.FS. It refuses to move a file that is
// still being written, to a name that is a directory, or below a file.
func (f *FS) Rename(ctx context.Context, oldName, newName string) error {
	if err := f.lock(oldName, newName); err != nil {
		return err
	}
	defer f.mu.Unlock()
	fl, ok := f.files[oldName]
	if !ok {
		return pathErr("rename", oldName, fs.ErrNotExist)
	}
	switch {
	case fl.writing:
		return pathErr("rename", oldName, errors.New("file is still being written"))
	case oldName == newName:
		return nil
	case f.isDir(newName):
		return pathErr("rename", newName, errors.New("target is a directory"))
	case f.parentIsFile(newName):
		return pathErr("rename", newName, errors.New("a parent directory is a file"))
	}
	delete(f.files, oldName)
	f.files[newName] = fl
	return nil
}

// Close implements fsbackend.FS. Every later call, and every call of an
// open writer, fails with fsbackend.ErrClosed. Readers stay usable until
// they are closed.
func (f *FS) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fsbackend.ErrClosed
	}
	f.closed = true
	return nil
}

var _ fsbackend.FS = (*FS)(nil)

// RemoveAll implements fsbackend.DirRemover: every file below dir goes
// at once, durably.
func (f *FS) RemoveAll(ctx context.Context, dir string) error {
	if err := f.lock(dir); err != nil {
		return err
	}
	defer f.mu.Unlock()
	for name := range f.files {
		if strings.HasPrefix(name, dir+"/") {
			delete(f.files, name)
		}
	}
	return nil
}

var _ fsbackend.DirRemover = (*FS)(nil)
