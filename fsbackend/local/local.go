package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/stowage/stowage/fsbackend"
)

// FS is a local directory used as an fsbackend.FS. It is safe for
// concurrent use.
type FS struct {
	root   string
	closed atomic.Bool

	// dirMu orders the making of directories below root against the
	// removal of emptied ones, so that dirs never names a directory whose
	// entry in its parent was not synced.
	dirMu sync.Mutex
	dirs  map[string]struct{} // directories whose entry this FS synced

	fileMode, dirMode os.FileMode // of new files and directories
	// confine, if not "", is the absolute namespace directory: a path
	// below it that a symbolic link leads out of it is refused.
	confine string
}

// Options tune New. The zero value gives files 0600 and directories 0700
// (fsbackend.DefaultUmask) and no confinement.
type Options struct {
	// Umask clears permission bits of new files (0666) and directories
	// (0777); nil means fsbackend.DefaultUmask.
	Umask *os.FileMode
	// Confine, if not empty, is a directory (absolute, or relative to the
	// FS's root): operations on names below it whose path a symbolic link
	// leads out of it fail with fsbackend.ErrOutsideNamespace.
	Confine string
}

// New returns an FS rooted at dir with the default Options.
func New(dir string) (*FS, error) { return NewWith(dir, Options{}) }

// NewWith returns an FS rooted at dir, creating dir (and syncing the
// parent of every directory it makes) if needed.
func NewWith(dir string, o Options) (*FS, error) {
	umask := fsbackend.DefaultUmask
	if o.Umask != nil {
		umask = *o.Umask
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("stowage/fsbackend/local: %w", err)
	}
	var made []string // directories to make, deepest first
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(abs, fsbackend.DirMode(umask)); err != nil {
		return nil, fmt.Errorf("stowage/fsbackend/local: %w", err)
	}
	for _, d := range made {
		if err := syncDir(filepath.Dir(d)); err != nil {
			return nil, fmt.Errorf("stowage/fsbackend/local: %w", err)
		}
	}
	f := &FS{root: abs, dirs: map[string]struct{}{}, fileMode: fsbackend.FileMode(umask), dirMode: fsbackend.DirMode(umask)}
	if o.Confine != "" {
		c := filepath.Clean(o.Confine)
		if !filepath.IsAbs(c) {
			c = filepath.Join(abs, c)
		}
		f.confine = c
	}
	return f, nil
}

// Root returns the absolute directory the FS is rooted at.
func (f *FS) Root() string { return f.root }

func (f *FS) path(name string) (string, error) {
	if f.closed.Load() {
		return "", fsbackend.ErrClosed
	}
	if err := fsbackend.ValidName(name); err != nil {
		return "", err
	}
	p := filepath.Join(f.root, filepath.FromSlash(name))
	if err := f.checkConfined(name, p); err != nil {
		return "", err
	}
	return p, nil
}

// checkConfined refuses p (the path of name) when it lies below the
// confining directory but its deepest existing part resolves, through
// symbolic links, to somewhere outside it. The confining directory may
// itself be reached through links (/tmp on some systems): it is resolved
// the same way.
func (f *FS) checkConfined(name, p string) error {
	if f.confine == "" || (p != f.confine && !strings.HasPrefix(p, f.confine+string(filepath.Separator))) {
		return nil
	}
	base, err := filepath.EvalSymlinks(f.confine)
	if err != nil {
		return nil // the namespace does not exist yet: nothing in it links anywhere
	}
	existing := p
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		existing = filepath.Dir(existing)
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		// A dangling link: where it leads is not in the namespace.
		if st, lerr := os.Lstat(existing); lerr == nil && st.Mode()&os.ModeSymlink != 0 {
			return &fs.PathError{Op: "resolve", Path: name, Err: fsbackend.ErrOutsideNamespace}
		}
		return nil
	}
	if real != base && !strings.HasPrefix(real, base+string(filepath.Separator)) {
		return &fs.PathError{Op: "resolve", Path: name, Err: fsbackend.ErrOutsideNamespace}
	}
	return nil
}

// Capabilities implements fsbackend.FS.
func (f *FS) Capabilities() fsbackend.Capabilities {
	return fsbackend.Capabilities{DurableAppend: true, AtomicRename: true, ConditionalCreate: true}
}

// Create implements fsbackend.FS.
func (f *FS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	return f.create(ctx, name, false)
}

// create is Create; a deferred writer leaves every sync to its caller.
func (f *FS) create(ctx context.Context, name string, deferred bool) (fsbackend.Writer, error) {
	p, err := f.path(name)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir := filepath.Dir(p)
	var file *os.File
	err = f.withParents(dir, func() (err error) {
		file, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.fileMode)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &writer{f: file, dir: dir, deferred: deferred}, nil
}

// withParents makes dir and runs op in it. A concurrent Remove may empty
// and remove any directory on the way (before op), so a missing directory
// is made again, a bounded number of times.
func (f *FS) withParents(dir string, op func() error) error {
	var err error
	for try := 0; try < 20; try++ {
		if err = f.mkdirAllSync(dir); err == nil {
			err = op()
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

// syncUp syncs dir or, when a concurrent Remove already removed it, its
// nearest existing ancestor below or at root, whose entry for the removed
// directory is what must be durable then.
func syncUp(dir, root string) error {
	for {
		err := syncDir(dir)
		if !errors.Is(err, fs.ErrNotExist) || dir == root || !strings.HasPrefix(dir, root) {
			return err
		}
		dir = filepath.Dir(dir)
	}
}

// mkdirAllSync makes dir and every missing directory between it and the
// root, and syncs the parent of each before it returns, so that the
// directories a new file lies in survive a crash once the file's own entry
// is synced. A directory that already existed is synced into its parent
// too, once per FS: another goroutine or process may have made it and not
// synced it yet (or died before it did).
func (f *FS) mkdirAllSync(dir string) error {
	f.dirMu.Lock()
	defer f.dirMu.Unlock()
	return f.mkdirSync(dir)
}

// mkdirSync is mkdirAllSync with dirMu held.
func (f *FS) mkdirSync(dir string) error {
	if dir == f.root || !strings.HasPrefix(dir, f.root) {
		return nil
	}
	if _, ok := f.dirs[dir]; ok {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return nil
		}
		delete(f.dirs, dir) // removed behind our back: make it again
	}
	parent := filepath.Dir(dir)
	if err := f.mkdirSync(parent); err != nil {
		return err
	}
	if err := os.Mkdir(dir, f.dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := syncDir(parent); err != nil {
		return err
	}
	f.dirs[dir] = struct{}{}
	return nil
}

// onDirSync, when a test sets it, is told of every directory sync.
var onDirSync func(dir string)

func syncDir(dir string) error {
	if onDirSync != nil {
		onDirSync(dir)
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return &fs.PathError{Op: "sync", Path: dir, Err: err}
	}
	return nil
}

type writer struct {
	f         *os.File
	dir       string
	deferred  bool // made through the Deferred view: Sync syncs the bytes only, Close nothing
	dirSynced bool // the file's entry in dir is durable
	closed    bool
	done      bool // Close returned nil: the file is finished and Abort keeps it
	// stale is, for a recycled file, the length of the old bytes that
	// writing has not yet covered or cut: Sync and Close cut them.
	stale   int64
	written int64
	// ahead is how many bytes of zeros are kept written past written
	// (ZeroAhead; 0: none); zeroed is where the zeros written so far end.
	ahead, zeroed int64
}

// zeroBlock is what zeroAhead writes, as many times as it takes: one
// block for every writer, which only reads it.
var zeroBlock [64 << 10]byte

// ZeroAhead implements fsbackend.ZeroAheader.
func (w *writer) ZeroAhead(n int64) { w.ahead = max(0, n) }

// zeroAhead writes zeros from the end of what was written or zeroed up to
// ahead bytes past end, once end reaches past the zeros. pwrite leaves the
// file offset, at which the next Write goes, where it is.
func (w *writer) zeroAhead(end int64) error {
	if w.ahead == 0 || end <= w.zeroed {
		return nil
	}
	for from, to := max(w.zeroed, end), end+w.ahead; from < to; {
		n, err := w.f.WriteAt(zeroBlock[:min(int64(len(zeroBlock)), to-from)], from)
		if err != nil {
			w.zeroed = to // some may be written: Close cuts up to here
			return err
		}
		from += int64(n)
		w.zeroed = from
	}
	return nil
}

// cut cuts the file back to the bytes written when it holds more, up to
// end: a recycled file's old bytes (stale: Sync and Close), or also the
// zeros written ahead (zeroed: Close, as the file is finished).
func (w *writer) cut(end int64) error {
	if end <= w.written {
		return nil
	}
	if err := w.f.Truncate(w.written); err != nil {
		return err
	}
	w.stale, w.zeroed = min(w.stale, w.written), min(w.zeroed, w.written)
	return nil
}

func (w *writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, fsbackend.ErrClosed
	}
	if err := w.zeroAhead(w.written + int64(len(p))); err != nil {
		// No room for the zeros (a disk nearly full) need not mean no
		// room for p: the zeros written go again, the file goes on
		// without them, and p's own write decides.
		w.ahead = 0
		if err := w.cut(w.zeroed); err != nil {
			return 0, err
		}
	}
	n, err := w.f.Write(p)
	w.written += int64(n)
	return n, err
}

func (w *writer) Sync() error {
	if w.closed {
		return fsbackend.ErrClosed
	}
	if err := w.cut(w.stale); err != nil {
		return err
	}
	if err := unix.Fdatasync(int(w.f.Fd())); err != nil {
		return &fs.PathError{Op: "fdatasync", Path: w.f.Name(), Err: err}
	}
	if w.deferred {
		return nil
	}
	return w.syncEntry()
}

// syncEntry makes the file's directory entry durable, once: the bytes a
// Sync made durable are reachable after a crash only through it.
func (w *writer) syncEntry() error {
	if w.dirSynced {
		return nil
	}
	if err := syncDir(w.dir); err != nil {
		return err
	}
	w.dirSynced = true
	return nil
}

// Truncate implements fsbackend.Truncater.
func (w *writer) Truncate(size int64) error {
	if w.closed {
		return fsbackend.ErrClosed
	}
	if err := w.f.Truncate(size); err != nil {
		return err
	}
	w.written, w.stale, w.zeroed = size, min(w.stale, size), min(w.zeroed, size)
	_, err := w.f.Seek(size, 0)
	return err
}

func (w *writer) Close() error {
	if w.closed {
		return fsbackend.ErrClosed
	}
	w.closed = true
	if err := w.cut(max(w.stale, w.zeroed)); err != nil {
		w.f.Close()
		return err
	}
	if w.deferred {
		if err := w.f.Close(); err != nil {
			return err
		}
		w.done = true
		return nil
	}
	if err := unix.Fdatasync(int(w.f.Fd())); err != nil {
		w.f.Close()
		return &fs.PathError{Op: "fdatasync", Path: w.f.Name(), Err: err}
	}
	if err := w.f.Close(); err != nil {
		return err
	}
	if err := w.syncEntry(); err != nil {
		return err
	}
	w.done = true
	return nil
}

// Abort removes the file unless Close already finished it, so that a
// deferred Abort after a successful Close is harmless.
func (w *writer) Abort() error {
	if w.done {
		return nil
	}
	if !w.closed {
		w.closed = true
		w.f.Close()
	}
	err := os.Remove(w.f.Name())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

type reader struct {
	f      *os.File
	size   int64
	closed atomic.Bool
}

func (r *reader) Size() int64 { return r.size }

func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	if r.closed.Load() {
		return 0, fsbackend.ErrClosed
	}
	return r.f.ReadAt(p, off)
}

func (r *reader) Close() error {
	if r.closed.Swap(true) {
		return fsbackend.ErrClosed
	}
	return r.f.Close()
}

// notExist makes ENOTDIR (a path through a file, such as "f/x" where f is
// a file) match fs.ErrNotExist, as the contract asks of a missing name.
func notExist(err error) error {
	var pe *fs.PathError
	if errors.Is(err, unix.ENOTDIR) && errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: pe.Path, Err: fs.ErrNotExist}
	}
	return err
}

// Open implements fsbackend.FS.
func (f *FS) Open(ctx context.Context, name string) (fsbackend.Reader, error) {
	p, err := f.path(name)
	if err != nil {
		return nil, err
	}
	file, err := os.Open(p)
	if err != nil {
		return nil, notExist(err)
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, err
	}
	if st.IsDir() {
		file.Close()
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return &reader{f: file, size: st.Size()}, nil
}

// Stat implements fsbackend.FS.
func (f *FS) Stat(ctx context.Context, name string) (fsbackend.FileInfo, error) {
	p, err := f.path(name)
	if err != nil {
		return fsbackend.FileInfo{}, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return fsbackend.FileInfo{}, notExist(err)
	}
	if st.IsDir() {
		return fsbackend.FileInfo{}, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
	}
	return fsbackend.FileInfo{Name: name, Size: st.Size(), ModTime: st.ModTime()}, nil
}

// List implements fsbackend.FS.
func (f *FS) List(ctx context.Context, dir string) ([]fsbackend.FileInfo, error) {
	if f.closed.Load() {
		return nil, fsbackend.ErrClosed
	}
	if err := fsbackend.ValidDir(dir); err != nil {
		return nil, err
	}
	base := filepath.Join(f.root, filepath.FromSlash(dir))
	if st, err := os.Stat(base); err != nil || !st.IsDir() {
		if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
			return []fsbackend.FileInfo{}, nil // nothing lies below a missing dir or a file
		}
		return nil, err
	}
	var out []fsbackend.FileInfo
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(f.root, p)
		if err != nil {
			return err
		}
		out = append(out, fsbackend.FileInfo{Name: filepath.ToSlash(rel), Size: info.Size(), ModTime: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Remove implements fsbackend.FS. Emptied parent directories below the
// root are removed too.
func (f *FS) Remove(ctx context.Context, name string) error {
	return f.remove(name, false)
}

// remove is Remove; deferred, it only removes the file.
func (f *FS) remove(name string, deferred bool) error {
	p, err := f.path(name)
	if err != nil {
		return err
	}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return &fs.PathError{Op: "remove", Path: p, Err: fs.ErrNotExist}
	}
	if err := os.Remove(p); err != nil {
		return notExist(err)
	}
	if deferred {
		return nil
	}
	dir := filepath.Dir(p)
	if err := syncUp(dir, f.root); err != nil {
		return err
	}
	f.dirMu.Lock()
	defer f.dirMu.Unlock()
	for dir != f.root && strings.HasPrefix(dir, f.root) {
		if os.Remove(dir) != nil {
			break
		}
		delete(f.dirs, dir)
		dir = filepath.Dir(dir)
	}
	return nil
}

// Rename implements fsbackend.FS.
func (f *FS) Rename(ctx context.Context, oldName, newName string) error {
	return f.rename(oldName, newName, false)
}

// rename is Rename; deferred, it syncs no directory it changes.
func (f *FS) rename(oldName, newName string, deferred bool) error {
	op, err := f.path(oldName)
	if err != nil {
		return err
	}
	np, err := f.path(newName)
	if err != nil {
		return err
	}
	if st, err := os.Stat(op); err != nil {
		return notExist(err)
	} else if st.IsDir() {
		return &fs.PathError{Op: "rename", Path: op, Err: fs.ErrNotExist}
	}
	if err := f.withParents(filepath.Dir(np), func() error { return os.Rename(op, np) }); err != nil {
		return notExist(err)
	}
	if deferred {
		return nil
	}
	if err := syncDir(filepath.Dir(np)); err != nil {
		return err
	}
	if filepath.Dir(np) != filepath.Dir(op) {
		return syncUp(filepath.Dir(op), f.root)
	}
	return nil
}

// Close implements fsbackend.FS.
func (f *FS) Close() error {
	f.closed.Store(true)
	return nil
}

var _ fsbackend.FS = (*FS)(nil)

func init() {
	fsbackend.Register("local", func(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) {
		umask, err := fsbackend.Umask(p)
		if err != nil {
			return nil, err
		}
		// The namespace (a map store's or a checkpoint storage's) confines
		// symbolic links: one that leads out of it is refused.
		return NewWith("/", Options{Umask: &umask, Confine: p.Get("namespace", "")})
	})
}
