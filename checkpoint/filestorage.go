package checkpoint

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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
	owned    fsbackend.FS // closed by Close when the storage opened it
	ns       string       // namespace, "/a/b/" form
	keep     int          // < 0: keep all
	log      *slog.Logger
	onDamage func(Damage)
	names    nameLocks // one store of a file name at a time

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
		fs: sub, ns: ns, keep: keep, log: log, onDamage: opts.OnDamage,
		closing: make(chan struct{}), queue: make(chan *task, q),
	}
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

// StoreCheckpoint implements Storage. The file is written atomically: to a
// temporary name then renamed where the back end renames atomically,
// otherwise by a conditional create of the final name (one PUT on object
// stores). Storing the same checkpoint again with the same state succeeds;
// with another state it fails with ErrExists. Stores of one checkpoint
// through one FileStorage take turns, so when they run concurrently the
// first succeeds and each with a different state fails with ErrExists.
// (On the rename path the exists check and the rename are two steps, so
// two processes storing the same checkpoint at once are not ordered
// against each other; a job's checkpoints have one writer.) Once the new
// file is durable and reads back identical, checkpoints of the pipeline
// beyond the newest MaxRetained are deleted; a failed deletion is logged
// and retried by the next store, it does not fail this one. A checkpoint
// older than the newest MaxRetained of its pipeline is deleted again at
// once.
func (s *FileStorage) StoreCheckpoint(ctx context.Context, st PipelineState) (string, error) {
	if err := s.check(st.JobID); err != nil {
		return "", err
	}
	if err := validIDs(st.PipelineID, st.CheckpointID); err != nil {
		return "", err
	}
	return s.store(ctx, st)
}

func (s *FileStorage) path(job string, pipeline int, id int64) string {
	return job + "/" + FileName(pipeline, id)
}

func (s *FileStorage) store(ctx context.Context, st PipelineState) (string, error) {
	name := s.path(st.JobID, st.PipelineID, st.CheckpointID)
	data := encode(st)
	// The exists check and the rename of write are two steps: without the
	// lock two stores of one name with different states could both pass
	// the check and both succeed, the last rename winning.
	unlock, err := s.names.lock(ctx, name)
	if err != nil {
		return "", s.wrap("store", name, err)
	}
	err = s.write(ctx, st, name, data, true)
	unlock()
	if err != nil {
		return "", err
	}
	if err := s.retain(ctx, st, name, data); err != nil {
		return "", err
	}
	return FileName(st.PipelineID, st.CheckpointID), nil
}

func (s *FileStorage) write(ctx context.Context, st PipelineState, name string, data []byte, retry bool) error {
	var err error
	if s.fs.Capabilities().AtomicRename {
		if _, serr := s.fs.Stat(ctx, name); serr == nil {
			err = fsbackend.ErrExist
		} else if !errors.Is(serr, fsbackend.ErrNotExist) {
			return s.wrap("stat", name, serr)
		} else {
			err = fsbackend.WriteFileAtomic(ctx, s.fs, name, randomSuffix(), data)
		}
	} else {
		err = fsbackend.WriteFile(ctx, s.fs, name, data)
	}
	if err == nil {
		return nil
	}
	if !errors.Is(err, fsbackend.ErrExist) {
		return s.wrap("store", name, err)
	}
	// The name is taken: a retry of a store that did succeed is fine, a
	// damaged leftover is replaced, anything else is a conflict.
	old, rerr := s.read(ctx, st.JobID, st.PipelineID, st.CheckpointID)
	switch {
	case rerr == nil && bytes.Equal(old.States, st.States):
		return nil
	case errors.Is(rerr, ErrCorrupt) && retry:
		s.log.Warn("stowage/checkpoint: replacing damaged checkpoint file", "file", s.ns+name, "error", rerr)
		if err := s.fs.Remove(ctx, name); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
			return s.wrap("remove", name, err)
		}
		return s.write(ctx, st, name, data, false)
	case rerr == nil:
		return fmt.Errorf("%w: %s", ErrExists, s.ns+name)
	default:
		return rerr
	}
}

func (s *FileStorage) wrap(op, name string, err error) error {
	return fmt.Errorf("stowage/checkpoint: %s %s: %w", op, s.ns+name, err)
}

func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// retain deletes the checkpoints of st's pipeline beyond the newest keep,
// as found in storage now, so that the limit survives restarts.
func (s *FileStorage) retain(ctx context.Context, st PipelineState, name string, data []byte) error {
	if s.keep < 0 {
		return nil
	}
	l, err := s.listJob(ctx, st.JobID)
	if err != nil {
		s.log.Warn("stowage/checkpoint: listing for retention failed", "job", st.JobID, "error", err)
		return nil
	}
	ids := l.ids(st.PipelineID) // descending
	if len(ids) <= s.keep {
		return nil
	}
	cut := ids[s.keep-1] // oldest id that stays
	if st.CheckpointID >= cut {
		// Before deleting older checkpoints, make sure the new one is
		// there and reads back exactly as written.
		got, err := fsbackend.ReadFile(ctx, s.fs, name)
		if err != nil {
			return s.wrap("read back", name, err)
		}
		if !bytes.Equal(got, data) {
			return fmt.Errorf("%w: %s reads back different bytes than were written", ErrCorrupt, s.ns+name)
		}
	}
	for _, id := range ids[s.keep:] {
		n := s.path(st.JobID, st.PipelineID, id)
		if err := s.fs.Remove(ctx, n); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
			s.log.Warn("stowage/checkpoint: deleting retired checkpoint failed", "file", s.ns+n, "error", err)
		}
	}
	for _, t := range l.temps {
		if t.pipeline == st.PipelineID && t.id < cut {
			if err := s.fs.Remove(ctx, t.name); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
				s.log.Warn("stowage/checkpoint: deleting stale temporary file failed", "file", s.ns+t.name, "error", err)
			}
		}
	}
	return nil
}

// entry is one file of a job directory whose name parses.
type entry struct {
	pipeline int
	id       int64
	name     string // relative to the namespace
	size     int64
}

type jobListing struct {
	files []entry // checkpoint files, sorted by pipeline then id
	temps []entry // leftovers of interrupted atomic writes
	stray []entry // anything else
}

// ids returns the checkpoint ids of one pipeline, highest first.
func (l jobListing) ids(pipeline int) []int64 {
	var out []int64
	for _, e := range l.files {
		if e.pipeline == pipeline {
			out = append(out, e.id)
		}
	}
	slices.Reverse(out)
	return out
}

func (s *FileStorage) listJob(ctx context.Context, job string) (jobListing, error) {
	fis, err := s.fs.List(ctx, job)
	if err != nil {
		return jobListing{}, s.wrap("list", job, err)
	}
	return classify(job, fis), nil
}

// classify sorts the files of one job directory into checkpoint files,
// temporary files and strays.
func classify(job string, fis []fsbackend.FileInfo) jobListing {
	l := jobListing{files: make([]entry, 0, len(fis))}
	prefix := job + "/"
	for _, fi := range fis {
		base, ok := strings.CutPrefix(fi.Name, prefix)
		if !ok {
			continue
		}
		e := entry{name: fi.Name, size: fi.Size}
		if p, id, ok := ParseFileName(base); ok {
			e.pipeline, e.id = p, id
			l.files = append(l.files, e)
		} else if p, id, ok := parseTempName(base); ok {
			e.pipeline, e.id = p, id
			l.temps = append(l.temps, e)
		} else {
			l.stray = append(l.stray, e)
		}
	}
	// List is sorted by name and the names sort by (pipeline, id), but do
	// not rely on a back end's collation.
	if !slices.IsSortedFunc(l.files, compareEntries) {
		slices.SortFunc(l.files, compareEntries)
	}
	return l
}

func compareEntries(a, b entry) int {
	if a.pipeline != b.pipeline {
		return a.pipeline - b.pipeline
	}
	switch {
	case a.id < b.id:
		return -1
	case a.id > b.id:
		return 1
	}
	return 0
}

// read reads and checks one checkpoint file.
func (s *FileStorage) read(ctx context.Context, job string, pipeline int, id int64) (PipelineState, error) {
	name := s.path(job, pipeline, id)
	return readCheckpoint(ctx, s.fs, s.ns, name, job, pipeline, id)
}

func readCheckpoint(ctx context.Context, fsys fsbackend.FS, ns, name, job string, pipeline int, id int64) (PipelineState, error) {
	data, err := fsbackend.ReadFile(ctx, fsys, name)
	if errors.Is(err, fsbackend.ErrNotExist) {
		return PipelineState{}, fmt.Errorf("%w: job %q pipeline %d checkpoint %d", ErrNotFound, job, pipeline, id)
	}
	if err != nil {
		return PipelineState{}, fmt.Errorf("stowage/checkpoint: read %s: %w", ns+name, err)
	}
	st, derr := decode(data)
	dmg := Damage{Job: job, Pipeline: pipeline, CheckpointID: id, File: ns + name}
	if derr != nil {
		dmg.Offset, dmg.Reason = derr.Offset, derr.Reason
		if derr.Err != nil {
			dmg.Reason += ": " + derr.Err.Error()
		}
		return PipelineState{}, &CorruptError{Damage: dmg}
	}
	if st.JobID != job || st.PipelineID != pipeline || st.CheckpointID != id {
		dmg.Reason = fmt.Sprintf("header holds job %q pipeline %d checkpoint %d, which does not match the file name", st.JobID, st.PipelineID, st.CheckpointID)
		return PipelineState{}, &CorruptError{Damage: dmg}
	}
	return st, nil
}

// damaged reports a damaged file that a read skipped.
func (s *FileStorage) damaged(err error) bool {
	var ce *CorruptError
	if !errors.As(err, &ce) {
		return false
	}
	s.log.Warn("stowage/checkpoint: skipping damaged checkpoint", "file", ce.Damage.File, "offset", ce.Damage.Offset, "reason", ce.Damage.Reason)
	if s.onDamage != nil {
		s.onDamage(ce.Damage)
	}
	return true
}

// readAll reads the given entries, skipping damaged and vanished files.
func (s *FileStorage) readAll(ctx context.Context, job string, es []entry) ([]PipelineState, error) {
	out := make([]PipelineState, 0, len(es))
	for _, e := range es {
		st, err := s.read(ctx, job, e.pipeline, e.id)
		if err != nil {
			if s.damaged(err) || errors.Is(err, ErrNotFound) {
				continue
			}
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// GetAllCheckpoints implements Storage.
func (s *FileStorage) GetAllCheckpoints(ctx context.Context, jobID string) ([]PipelineState, error) {
	if err := s.check(jobID); err != nil {
		return nil, err
	}
	l, err := s.listJob(ctx, jobID)
	if err != nil {
		return nil, err
	}
	return s.readAll(ctx, jobID, l.files)
}

// GetCheckpointsByJobAndPipeline implements Storage.
func (s *FileStorage) GetCheckpointsByJobAndPipeline(ctx context.Context, jobID string, pipelineID int) ([]PipelineState, error) {
	if err := s.check(jobID); err != nil {
		return nil, err
	}
	l, err := s.listJob(ctx, jobID)
	if err != nil {
		return nil, err
	}
	var es []entry
	for _, e := range l.files {
		if e.pipeline == pipelineID {
			es = append(es, e)
		}
	}
	return s.readAll(ctx, jobID, es)
}

// latest reads the highest-id readable checkpoint among ids (descending).
func (s *FileStorage) latest(ctx context.Context, job string, pipeline int, ids []int64) (PipelineState, error) {
	for _, id := range ids {
		st, err := s.read(ctx, job, pipeline, id)
		if err == nil {
			return st, nil
		}
		if s.damaged(err) || errors.Is(err, ErrNotFound) {
			continue
		}
		return PipelineState{}, err
	}
	return PipelineState{}, fmt.Errorf("%w: job %q pipeline %d has no readable checkpoint", ErrNotFound, job, pipeline)
}

// GetLatestCheckpointByJobAndPipeline implements Storage. The ids come
// from the file names; only the chosen file is read, and if it is damaged
// it is reported (log warning and Options.OnDamage) and the next lower id
// is tried.
func (s *FileStorage) GetLatestCheckpointByJobAndPipeline(ctx context.Context, jobID string, pipelineID int) (PipelineState, error) {
	if err := s.check(jobID); err != nil {
		return PipelineState{}, err
	}
	l, err := s.listJob(ctx, jobID)
	if err != nil {
		return PipelineState{}, err
	}
	return s.latest(ctx, jobID, pipelineID, l.ids(pipelineID))
}

// GetLatestCheckpoint implements Storage, with the fallback of
// GetLatestCheckpointByJobAndPipeline for each pipeline. A pipeline with no
// readable checkpoint is left out.
func (s *FileStorage) GetLatestCheckpoint(ctx context.Context, jobID string) ([]PipelineState, error) {
	if err := s.check(jobID); err != nil {
		return nil, err
	}
	l, err := s.listJob(ctx, jobID)
	if err != nil {
		return nil, err
	}
	var out []PipelineState
	for i := 0; i < len(l.files); {
		p := l.files[i].pipeline
		j := i
		for j < len(l.files) && l.files[j].pipeline == p {
			j++
		}
		ids := make([]int64, 0, j-i)
		for k := j - 1; k >= i; k-- {
			ids = append(ids, l.files[k].id)
		}
		st, err := s.latest(ctx, jobID, p, ids)
		switch {
		case err == nil:
			out = append(out, st)
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
		i = j
	}
	return out, nil
}

// GetCheckpoint implements Storage.
func (s *FileStorage) GetCheckpoint(ctx context.Context, jobID string, pipelineID int, checkpointID int64) (PipelineState, error) {
	if err := s.check(jobID); err != nil {
		return PipelineState{}, err
	}
	if err := validIDs(pipelineID, checkpointID); err != nil {
		return PipelineState{}, err
	}
	return s.read(ctx, jobID, pipelineID, checkpointID)
}

// DeleteCheckpoint implements Storage: every file of the job's directory
// goes, temporary leftovers included.
func (s *FileStorage) DeleteCheckpoint(ctx context.Context, jobID string) error {
	if err := s.check(jobID); err != nil {
		return err
	}
	fis, err := s.fs.List(ctx, jobID)
	if err != nil {
		return s.wrap("list", jobID, err)
	}
	var errs []error
	for _, fi := range fis {
		if err := s.fs.Remove(ctx, fi.Name); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
			errs = append(errs, s.wrap("delete", fi.Name, err))
		}
	}
	return errors.Join(errs...)
}

// DeleteCheckpointByID implements Storage.
func (s *FileStorage) DeleteCheckpointByID(ctx context.Context, jobID string, pipelineID int, checkpointID int64) error {
	return s.DeleteCheckpoints(ctx, jobID, pipelineID, []int64{checkpointID})
}

// DeleteCheckpoints implements Storage. Absent checkpoints are ignored.
func (s *FileStorage) DeleteCheckpoints(ctx context.Context, jobID string, pipelineID int, checkpointIDs []int64) error {
	if err := s.check(jobID); err != nil {
		return err
	}
	var errs []error
	for _, id := range checkpointIDs {
		if err := validIDs(pipelineID, id); err != nil {
			return err
		}
		n := s.path(jobID, pipelineID, id)
		if err := s.fs.Remove(ctx, n); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
			errs = append(errs, s.wrap("delete", n, err))
		}
	}
	return errors.Join(errs...)
}
