package checkpoint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stowage/stowage/fsbackend"
)

// FileStorage is the Storage on any fsbackend.FS: one file per checkpoint
// at <namespace><jobId>/<FileName(pipeline, checkpoint)>. It is safe for
// concurrent use. Build it with Open, or through the "hdfs" factory.
type FileStorage struct {
	fs       fsbackend.FS // below the namespace
	dfs      fsbackend.FS // fs's Deferred view: fs itself where there is none
	deferred bool         // directory entries need SyncDir to be durable
	syncRoot func(ctx context.Context, dir string) error
	rename   bool         // the back end renames atomically
	atomicRm bool         // the back end's recursive delete is atomic: a job delete needs no markers
	owned    fsbackend.FS // closed by Close when the storage opened it
	ns       string       // namespace, "/a/b/" form
	nsDir    string       // namespace as a directory of the FS, "" for the root
	keep     int          // < 0: keep all
	log      *slog.Logger
	onDamage func(Damage)
	fence    func() error // Options.Fence
	jobs     nameLocks    // one store or delete of a job at a time

	reapMu     sync.Mutex // guards sending on reap against closing it
	reap       chan reapItem
	reapClosed bool
	reapers    sync.WaitGroup

	recycler fsbackend.Recycler // dfs's, where files are worth writing over (local disk); else nil
	spareMu  sync.Mutex
	spare    map[string]string // job: a retired checkpoint file kept to be written over

	resumeMu sync.Mutex   // one resume at a time
	resumed  atomic.Bool  // interrupted job deletions were looked for
	trashSeq atomic.Int64 // tells apart the trash names made in one nanosecond

	closed  atomic.Bool
	mu      sync.RWMutex // guards closing against new async submissions
	closing chan struct{}
	senders sync.WaitGroup
	workers sync.WaitGroup
	queue   chan *task
	once    sync.Once
}

var _ Storage = (*FileStorage)(nil)

// Open returns a FileStorage on opts.FS below opts.Namespace and starts its
// asynchronous store workers; Close stops them.
func Open(ctx context.Context, opts Options) (*FileStorage, error) {
	if opts.FS == nil {
		return nil, errors.New("stowage/checkpoint: Options.FS is nil")
	}
	ns, dir, err := cleanNamespace(opts.Namespace)
	if err != nil {
		return nil, err
	}
	sub, err := fsbackend.Sub(opts.FS, dir)
	if err != nil {
		return nil, fmt.Errorf("stowage/checkpoint: key namespace: %q: %w", opts.Namespace, err)
	}
	view, syncRoot, deferred := fsbackend.Deferred(opts.FS)
	dsub, err := fsbackend.Sub(view, dir)
	if err != nil {
		return nil, fmt.Errorf("stowage/checkpoint: key namespace: %q: %w", opts.Namespace, err)
	}
	keep := opts.MaxRetained
	if keep == 0 {
		keep = DefaultMaxRetained
	}
	if keep < 0 {
		keep = KeepAll
	}
	q, w := opts.AsyncQueue, opts.AsyncWorkers
	if q <= 0 {
		q = DefaultAsyncQueue
	}
	if w <= 0 {
		w = DefaultAsyncWorkers
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &FileStorage{
		fs: sub, dfs: dsub, deferred: deferred, syncRoot: syncRoot, rename: opts.FS.Capabilities().AtomicRename,
		atomicRm: fsbackend.RemovesAtomically(opts.FS),
		ns:       ns, nsDir: dir, keep: keep, log: log, onDamage: opts.OnDamage, fence: opts.Fence,
		closing: make(chan struct{}), queue: make(chan *task, q), reap: make(chan reapItem, reapQueue),
	}
	if r, ok := dsub.(fsbackend.Recycler); ok && deferred && s.rename {
		s.recycler, s.spare = r, map[string]string{}
	}
	s.reapers.Add(1)
	go s.reaper()
	s.workers.Add(w)
	for range w {
		go s.worker()
	}
	return s, nil
}

// cleanNamespace checks a namespace and returns it in "/a/b/" form and as
// an FS directory ("a/b", "" for the root).
func cleanNamespace(ns string) (string, string, error) {
	if ns == "" {
		ns = DefaultNamespace
	}
	if !strings.HasSuffix(ns, "/") {
		return "", "", fmt.Errorf("stowage/checkpoint: key namespace: %q must end with \"/\"", ns)
	}
	dir := strings.Trim(ns, "/")
	if err := fsbackend.ValidDir(dir); err != nil {
		return "", "", fmt.Errorf("stowage/checkpoint: key namespace: %q: %w", ns, err)
	}
	if dir == "" {
		return "/", "", nil
	}
	return "/" + dir + "/", dir, nil
}

// Namespace returns the namespace in "/a/b/" form.
func (s *FileStorage) Namespace() string { return s.ns }

// MaxRetained returns the effective retention (KeepAll for no limit).
func (s *FileStorage) MaxRetained() int { return s.keep }

func (s *FileStorage) check(jobID string) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return ValidJobID(jobID)
}

func (s *FileStorage) path(job string, pipeline int, id int64) string {
	return job + "/" + FileName(pipeline, id)
}

// syncDir makes the entries of dir (a job's directory or its latest
// directory) durable where the back end needs a directory sync for that.
func (s *FileStorage) syncDir(ctx context.Context, dir string) error {
	if !s.deferred {
		return nil
	}
	if err := s.syncRoot(ctx, fsbackend.Join(s.nsDir, dir)); err != nil {
		return s.wrap("sync directory", dir, err)
	}
	return nil
}

func (s *FileStorage) wrap(op, name string, err error) error {
	return fmt.Errorf("stowage/checkpoint: %s %s: %w", op, s.ns+name, err)
}

func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
