package memfs

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

type file struct {
	data    []byte // written
	durable int    // length of data that is durable
	visible bool   // durable directory entry exists
	writer  *writer
	mod     time.Time
}

// FS is a crash-simulating in-memory file system. It is safe for
// concurrent use.
type FS struct {
	mu    sync.Mutex
	files map[string]*file
	gen   int // bumped by Crash; writers of an older generation are dead
}

// New returns an empty FS.
func New() *FS { return &FS{files: map[string]*file{}} }

// Crash drops every byte that was not made durable and kills every open
// writer: their later calls fail with fsbackend.ErrClosed.
func (f *FS) Crash() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++
	for name, fl := range f.files {
		if !fl.visible {
			delete(f.files, name)
			continue
		}
		fl.data = fl.data[:fl.durable:fl.durable]
		fl.writer = nil
	}
}

// Clone returns a copy of the durable and written state.
func (f *FS) Clone() *FS {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := New()
	for name, fl := range f.files {
		cp := *fl
		cp.data = append([]byte(nil), fl.data...)
		cp.writer = nil
		c.files[name] = &cp
	}
	return c
}

// Capabilities implements fsbackend.FS.
func (f *FS) Capabilities() fsbackend.Capabilities {
	return fsbackend.Capabilities{DurableAppend: true, AtomicRename: true, ConditionalCreate: true}
}

func pathErr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

// Create implements fsbackend.FS.
func (f *FS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	if err := fsbackend.ValidName(name); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.files[name]; ok {
		return nil, pathErr("create", name, fs.ErrExist)
	}
	fl := &file{mod: time.Now()}
	w := &writer{fs: f, name: name, f: fl, gen: f.gen}
	fl.writer = w
	f.files[name] = fl
	return w, nil
}

type writer struct {
	fs     *FS
	name   string
	f      *file
	gen    int
	closed bool
}

func (w *writer) live() error {
	if w.closed || w.gen != w.fs.gen {
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
	w.f.durable, w.f.visible = len(w.f.data), true
	return nil
}

// Truncate implements fsbackend.Truncater.
func (w *writer) Truncate(size int64) error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.live(); err != nil {
		return err
	}
	if int(size) < len(w.f.data) {
		w.f.data = w.f.data[:size]
	}
	w.f.durable = min(w.f.durable, len(w.f.data))
	return nil
}

func (w *writer) Close() error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.live(); err != nil {
		return err
	}
	w.closed = true
	w.f.durable, w.f.visible, w.f.writer = len(w.f.data), true, nil
	return nil
}

func (w *writer) Abort() error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	w.closed = true
	if fl, ok := w.fs.files[w.name]; ok && fl == w.f {
		delete(w.fs.files, w.name)
	}
	return nil
}

type reader struct {
	data []byte
}

func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r.data)) {
		return 0, io.EOF
	}
	n := copy(p, r.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (r *reader) Close() error { return nil }
func (r *reader) Size() int64  { return int64(len(r.data)) }

// Open implements fsbackend.FS. A reader sees the bytes written so far.
func (f *FS) Open(ctx context.Context, name string) (fsbackend.Reader, error) {
	if err := fsbackend.ValidName(name); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.files[name]
	if !ok {
		return nil, pathErr("open", name, fs.ErrNotExist)
	}
	return &reader{data: append([]byte(nil), fl.data...)}, nil
}

// Stat implements fsbackend.FS.
func (f *FS) Stat(ctx context.Context, name string) (fsbackend.FileInfo, error) {
	if err := fsbackend.ValidName(name); err != nil {
		return fsbackend.FileInfo{}, err
	}
	f.mu.Lock()
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
	var out []fsbackend.FileInfo
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
	if err := fsbackend.ValidName(name); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.files[name]; !ok {
		return pathErr("remove", name, fs.ErrNotExist)
	}
	delete(f.files, name)
	return nil
}

// Rename implements fsbackend.FS.
func (f *FS) Rename(ctx context.Context, oldName, newName string) error {
	if err := fsbackend.ValidName(oldName); err != nil {
		return err
	}
	if err := fsbackend.ValidName(newName); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.files[oldName]
	if !ok {
		return pathErr("rename", oldName, fs.ErrNotExist)
	}
	if fl.writer != nil {
		return pathErr("rename", oldName, fmt.Errorf("file is still being written"))
	}
	delete(f.files, oldName)
	f.files[newName] = fl
	return nil
}

// Close implements fsbackend.FS.
func (f *FS) Close() error { return nil }

var _ fsbackend.FS = (*FS)(nil)
