package checkpoint

import (
	"context"
	"errors"
	"strings"

	"github.com/stowage/stowage/fsbackend"
)

// reapQueue is how many files and jobs may wait for the background
// deletion before a store or delete deletes them itself.
const reapQueue = 256

// reapItem is one piece of background work, in the order queued.
type reapItem struct {
	file    string        // a file that is no checkpoint any more
	job     string        // or a job whose marked deletion to finish
	trash   string        // or a deleted job's directory in the trash directory
	barrier chan struct{} // or closed once everything queued before is done
}

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
		case s.reap <- reapItem{file: n}:
		default:
			s.remove(context.Background(), names[i:], "deleting a leftover file failed")
			return
		}
	}
}

// removeJobLater queues the removal of a marked job's directory where
// syncs are deferred (the local disk, where unlinking a thousand synced
// files takes a disk's time to free their blocks, and the job already
// reads as deleted). It reports false when the caller must remove it
// itself: elsewhere (one recursive delete request), with the queue full,
// or after Close.
func (s *FileStorage) removeJobLater(job string) bool {
	if !s.deferred {
		return false
	}
	s.reapMu.Lock()
	defer s.reapMu.Unlock()
	if s.reapClosed {
		return false
	}
	select {
	case s.reap <- reapItem{job: job}:
		return true
	default:
		return false
	}
}

// emptyTrashLater has a deleted job's directory, renamed into the trash
// directory, unlinked in the background; at once where syncs are not
// deferred, with the queue full, or after Close. Nothing needs to wait
// for it: no lookup sees the trash, and the first store or delete of a
// restarted storage empties what is left there.
func (s *FileStorage) emptyTrashLater(trash string) {
	s.reapMu.Lock()
	queued := false
	if s.deferred && !s.reapClosed {
		select {
		case s.reap <- reapItem{trash: trash}:
			queued = true
		default:
		}
	}
	s.reapMu.Unlock()
	if !queued {
		s.emptyTrash(context.Background(), trash)
	}
}

// emptyTrash unlinks a deleted job's directory in the trash directory. No
// sync follows: should the removal not survive a crash, the next storage
// empties the trash again.
func (s *FileStorage) emptyTrash(ctx context.Context, trash string) {
	if err := fsbackend.RemoveAll(ctx, s.dfs, trash); err != nil {
		s.log.Warn("stowage/checkpoint: removing a deleted job's files failed", "dir", s.ns+trash, "error", err)
	}
}

// reaper does what reapLater and removeJobLater queued, until Close.
func (s *FileStorage) reaper() {
	defer s.reapers.Done()
	for it := range s.reap {
		switch {
		case it.barrier != nil:
			close(it.barrier)
		case s.fenced("remove", it.file+it.job+it.trash) != nil:
			// Left for later: a retired file is removed by a later
			// retention or job delete, a marked job by its next store or
			// delete, a trash folder and a marked job by a restarted
			// storage's first one (resume).
			s.log.Warn("stowage/checkpoint: background removal skipped while the namespace lease is not known to be held", "file", s.ns+it.file, "job", it.job, "trash", it.trash)
		case it.trash != "":
			s.emptyTrash(context.Background(), it.trash)
		case it.job != "":
			if err := s.removeMarkedJob(context.Background(), it.job); err != nil {
				s.log.Warn("stowage/checkpoint: removing a deleted job's files failed", "job", it.job, "error", err)
			}
		default:
			if err := s.dfs.Remove(context.Background(), it.file); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
				s.log.Warn("stowage/checkpoint: deleting a leftover file failed", "file", s.ns+it.file, "error", err)
			}
		}
	}
}

// removeMarkedJob removes the files of a job DeleteCheckpoint marked, if
// it is still marked (a store or delete of the job may have finished the
// deletion first) and its latest directory is still emptied.
func (s *FileStorage) removeMarkedJob(ctx context.Context, job string) error {
	unlock, err := s.jobs.lock(ctx, job)
	if err != nil {
		return err
	}
	defer unlock()
	switch _, err := s.fs.Stat(ctx, deletionMark(job)); {
	case errors.Is(err, fsbackend.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	ll, err := listLatest(ctx, s.fs, s.ns, job)
	if err != nil {
		return err
	}
	if len(ll.names(job)) > 0 {
		return s.deleteJob(ctx, job)
	}
	return s.removeJob(ctx, job)
}

// WaitBackground waits until the work this storage queued in the
// background before the call is done: on the local disk, the unlinking
// of retired checkpoints and of deleted jobs' files (which read as
// deleted before it). Close waits for it too. It returns ctx's error if
// ctx ends first.
func (s *FileStorage) WaitBackground(ctx context.Context) error {
	b := make(chan struct{})
	s.reapMu.Lock()
	if s.reapClosed {
		s.reapMu.Unlock()
		return nil
	}
	select {
	case s.reap <- reapItem{barrier: b}:
	case <-ctx.Done():
		s.reapMu.Unlock()
		return ctx.Err()
	}
	s.reapMu.Unlock()
	select {
	case <-b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stopReaper lets the reaper finish what is queued and waits for it, then
// deletes the spare retired files kept for stores to write over.
func (s *FileStorage) stopReaper() {
	s.reapMu.Lock()
	if !s.reapClosed {
		s.reapClosed = true
		close(s.reap)
	}
	s.reapMu.Unlock()
	s.reapers.Wait()
	s.spareMu.Lock()
	spares := make([]string, 0, len(s.spare))
	for job, n := range s.spare {
		spares = append(spares, n)
		delete(s.spare, job)
	}
	s.spareMu.Unlock()
	s.remove(context.Background(), spares, "deleting a leftover file failed")
}

// reapClosedLocked reports whether Close stopped the reaper; the caller
// holds spareMu, which orders it against stopReaper's taking the spares.
func (s *FileStorage) reapClosedLocked() bool {
	s.reapMu.Lock()
	defer s.reapMu.Unlock()
	return s.reapClosed
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
	if s.resumed.Load() || s.fenced("resume", deletionDir) != nil {
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
	if err := s.resumeTrash(ctx); err != nil {
		s.log.Warn("stowage/checkpoint: listing deleted jobs' files left to unlink failed", "dir", s.ns+trashDir, "error", err)
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

// resumeTrash has the directories an earlier process left in the trash
// directory unlinked, as emptyTrashLater does: one List of that
// directory, which is empty but for deletions a crash or an error cut
// short.
func (s *FileStorage) resumeTrash(ctx context.Context) error {
	if _, ok := s.fs.(fsbackend.DirRenamer); !ok || !s.deferred {
		return nil // trashJob renames nothing here
	}
	fis, err := s.fs.List(ctx, trashDir)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, fi := range fis {
		rest, ok := strings.CutPrefix(fi.Name, trashDir+"/")
		if !ok {
			continue
		}
		d, _, _ := strings.Cut(rest, "/")
		if d == "" || seen[d] {
			continue
		}
		seen[d] = true
		s.emptyTrashLater(trashDir + "/" + d)
	}
	return nil
}

// resumeJob finishes one job's deletion if its mark is still there (a
// store or delete of the job may have finished it first).
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
