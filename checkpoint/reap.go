package checkpoint

import (
	"context"
	"errors"
	"strings"

	"github.com/stowage/stowage/fsbackend"
)

// reapQueue is how many files may wait for the background deletion before
// a store deletes them itself.
const reapQueue = 256

// reapLater has files that are no longer checkpoints (retired ones,
// leftovers of interrupted writes) deleted in the background where syncs
// are deferred: on the local disk deleting a file frees its space, which
// costs more than the rest of a store's metadata work, and nothing needs
// it done before the store returns. Elsewhere, when the queue is full or
// after Close, it deletes them at once.
func (s *FileStorage) reapLater(names []string) {
	if len(names) == 0 {
		return
	}
	s.reapMu.Lock()
	defer s.reapMu.Unlock()
	for i, n := range names {
		if !s.deferred || s.reapClosed {
			s.remove(context.Background(), names[i:], "deleting a leftover file failed")
			return
		}
		select {
		case s.reap <- n:
		default:
			s.remove(context.Background(), names[i:], "deleting a leftover file failed")
			return
		}
	}
}

// reaper deletes what reapLater queued, until Close.
func (s *FileStorage) reaper() {
	defer s.reapers.Done()
	for n := range s.reap {
		if err := s.dfs.Remove(context.Background(), n); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
			s.log.Warn("stowage/checkpoint: deleting a leftover file failed", "file", s.ns+n, "error", err)
		}
	}
}

// stopReaper lets the reaper finish what is queued and waits for it.
func (s *FileStorage) stopReaper() {
	s.reapMu.Lock()
	if !s.reapClosed {
		s.reapClosed = true
		close(s.reap)
	}
	s.reapMu.Unlock()
	s.reapers.Wait()
}

// resume finishes the job deletions that an earlier process (or an
// earlier call that failed) began and did not finish, as the namespace's
// deletion directory lists them. The first call of a storage that
// changes the namespace (a store or a delete) runs it, before it takes
// its job's lock; until it has listed the directory once, every such call
// tries again. It costs one List of that directory, which is empty but
// for interrupted deletions. Failures are logged: the jobs read as
// deleted meanwhile.
func (s *FileStorage) resume(ctx context.Context) {
	if s.resumed.Load() {
		return
	}
	s.resumeMu.Lock()
	defer s.resumeMu.Unlock()
	if s.resumed.Load() {
		return
	}
	fis, err := s.fs.List(ctx, deletionDir)
	if err != nil {
		s.log.Warn("stowage/checkpoint: listing interrupted job deletions failed", "dir", s.ns+deletionDir, "error", err)
		return
	}
	for _, fi := range fis {
		job, ok := strings.CutPrefix(fi.Name, deletionDir+"/")
		if !ok || ValidJobID(job) != nil {
			continue
		}
		if err := s.resumeJob(ctx, job); err != nil {
			s.log.Warn("stowage/checkpoint: finishing an interrupted job deletion failed", "job", job, "error", err)
		}
	}
	s.resumed.Store(true)
}

// resumeJob finishes one job's deletion if its mark is still there.
func (s *FileStorage) resumeJob(ctx context.Context, job string) error {
	unlock, err := s.jobs.lock(ctx, job)
	if err != nil {
		return err
	}
	defer unlock()
	switch _, err := s.fs.Stat(ctx, deletionMark(job)); {
	case errors.Is(err, fsbackend.ErrNotExist):
		return nil // finished meanwhile
	case err != nil:
		return err
	}
	return s.deleteJob(ctx, job)
}
