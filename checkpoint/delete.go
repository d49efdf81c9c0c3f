package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// DeleteCheckpoint implements Storage: every file of the job's directory
// goes, temporary leftovers included, in one of three ways.
//
// Where the back end's recursive delete is atomic (fsbackend.
// RemovesAtomically: HDFS, one NameNode transaction), that one call is
// the whole deletion: the job is there or gone, whatever stops it, and
// needs no marker.
//
// On the local disk (fsbackend.DirRenamer, syncs deferred) the job's
// directory is moved into the namespace's trash directory under a new
// name, one rename and two directory syncs after which no lookup finds
// the job, and its files are unlinked there in the background
// (WaitBackground and Close wait for it), with no sync after: unlinking
// synced files costs the disk the freeing of their blocks. Files a crash
// leaves in the trash are unlinked by the first store or delete of the
// next storage.
//
// Elsewhere (object stores) the job reads as deleted from the moment its
// markers are durable: the "deleting" file in its latest directory (seen
// by the listing every lookup starts with) and the job's file in the
// namespace's deletion directory (seen by every listing of the job, and
// by the first store or delete of a restarted storage). The latest
// directory is then emptied but for its marker, and the job's directory
// removed with one recursive delete where the back end has one
// (fsbackend.RemoveAll), its parent synced once; the namespace marker
// goes last. Should the deletion stop midway (an error, a crash), the job
// reads as deleted until the next DeleteCheckpoint or StoreCheckpoint of
// it, or the first store or delete of a restarted storage, finishes the
// work: nothing of it is returned half deleted.
func (s *FileStorage) DeleteCheckpoint(ctx context.Context, jobID string) error {
	if err := s.check(jobID); err != nil {
		return err
	}
	if err := s.fenced("delete", jobID); err != nil {
		return err
	}
	s.resume(ctx)
	unlock, err := s.jobs.lock(ctx, jobID)
	if err != nil {
		return s.wrap("delete", jobID, err)
	}
	defer unlock()
	if err := s.fenced("delete", jobID); err != nil {
		return err
	}
	if s.atomicRm {
		if err := fsbackend.RemoveAll(ctx, s.dfs, jobID); err != nil {
			return s.wrap("delete", jobID, err)
		}
		// A deletion mark left by an earlier deletion that stopped is
		// removed by resume, before this call, or by the next store of
		// the job; beside no job it hides nothing.
		return nil
	}
	switch err := s.trashJob(ctx, jobID); {
	case err == nil:
		return nil
	case !errors.Is(err, fsbackend.ErrUnsupported):
		return err
	}
	marked, err := s.markJob(ctx, jobID)
	if err != nil || !marked || s.removeJobLater(jobID) {
		return err
	}
	return s.removeJob(ctx, jobID)
}

// trashJob deletes the job by renaming its directory into the trash
// directory under a new name, one atomic and durable step after which no
// lookup finds the job, and leaves the unlinking of its files to the
// background (at once when the queue is full or the storage closed). It
// is the local disk's way (syncs deferred, fsbackend.DirRenamer): no
// marker to write and sync, and no sync after the unlinking. It fails
// with fsbackend.ErrUnsupported elsewhere. The caller holds the job's
// lock.
func (s *FileStorage) trashJob(ctx context.Context, job string) error {
	r, ok := s.fs.(fsbackend.DirRenamer)
	if !ok || !s.deferred {
		return fsbackend.ErrUnsupported
	}
	trash := fmt.Sprintf("%s/%d-%d", trashDir, time.Now().UnixNano(), s.trashSeq.Add(1))
	switch err := r.RenameDir(ctx, job, trash); {
	case errors.Is(err, fsbackend.ErrNotExist):
		return nil // no job directory: nothing to delete
	case err != nil:
		if errors.Is(err, fsbackend.ErrUnsupported) {
			return err
		}
		return s.wrap("delete", job, err)
	}
	s.takeSpare(job) // it went with the job's directory
	s.emptyTrashLater(trash)
	return nil
}

// deleteJob deletes the job, a deletion of which stopped midway; the
// caller holds its lock. Where the recursive delete is atomic, the
// deletion mark goes after it.
func (s *FileStorage) deleteJob(ctx context.Context, job string) error {
	if s.atomicRm {
		return s.removeJob(ctx, job)
	}
	marked, err := s.markJob(ctx, job)
	if err != nil || !marked {
		return err
	}
	return s.removeJob(ctx, job)
}

// markJob makes the job read as deleted, durably, and empties its latest
// directory but for the deleting marker; it reports false when there is
// no job to delete. The caller holds the job's lock.
func (s *FileStorage) markJob(ctx context.Context, job string) (bool, error) {
	s.takeSpare(job) // goes with the job's directory
	ll, err := listLatest(ctx, s.fs, s.ns, job)
	if err != nil {
		return false, err
	}
	tomb := latestPath(job, deletingName)
	rest := ll.names(job)
	if !ll.deleting && len(rest) == 0 {
		// No latest directory: a job written before it existed, one whose
		// deletion stopped after its latest directory was emptied, or
		// no job at all.
		l, err := listJob(ctx, s.fs, s.ns, job, true)
		if err != nil {
			return false, err
		}
		if len(l.all) == 0 && !l.marked {
			return false, nil
		}
	}
	if !ll.deleting && len(rest) > 0 {
		// First, so that a namespace marker never stands beside a latest
		// directory that still leads lookups to checkpoints.
		if err := s.touch(ctx, tomb); err != nil {
			return false, err
		}
		if err := s.syncDir(ctx, job+"/"+latestDir); err != nil {
			return false, err
		}
	}
	if err := s.touch(ctx, deletionMark(job)); err != nil {
		return false, err
	}
	if err := s.syncDir(ctx, deletionDir); err != nil {
		return false, err
	}
	// Empty the latest directory but for its marker: from here on, a
	// lookup that does not find the marker (the recursive delete removes
	// files in no set order) finds no pointer either and lists the job,
	// which sees the namespace marker.
	if len(rest) > 0 {
		var errs []error
		for _, n := range rest {
			if err := s.dfs.Remove(ctx, n); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
				errs = append(errs, s.wrap("delete", n, err))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return false, err
		}
		if err := s.syncDir(ctx, job+"/"+latestDir); err != nil {
			return false, err
		}
	}
	return true, nil
}

// removeJob removes the directory of a job markJob marked, then its mark.
// The caller holds the job's lock.
func (s *FileStorage) removeJob(ctx context.Context, job string) error {
	if err := fsbackend.RemoveAll(ctx, s.dfs, job); err != nil {
		return s.wrap("delete", job, err) // the markers stay: the job reads as deleted
	}
	if err := s.syncDir(ctx, ""); err != nil {
		return err
	}
	// Through the FS itself: durable, and on the local disk it also
	// removes the emptied deletion directory.
	if err := s.fs.Remove(ctx, deletionMark(job)); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
		return s.wrap("delete", deletionMark(job), err)
	}
	return nil
}

// DeleteCheckpointByID implements Storage.
func (s *FileStorage) DeleteCheckpointByID(ctx context.Context, jobID string, pipelineID int, checkpointID int64) error {
	return s.DeleteCheckpoints(ctx, jobID, pipelineID, []int64{checkpointID})
}

// DeleteCheckpoints implements Storage. Absent checkpoints are ignored.
// When the pipeline's latest checkpoint is among them, the pointer is
// first made to say "list" (and synced), then the files go, then the
// pointer is moved to the newest that is left.
func (s *FileStorage) DeleteCheckpoints(ctx context.Context, jobID string, pipelineID int, checkpointIDs []int64) error {
	if err := s.check(jobID); err != nil {
		return err
	}
	for _, id := range checkpointIDs {
		if err := validIDs(pipelineID, id); err != nil {
			return err
		}
	}
	if len(checkpointIDs) == 0 {
		return nil
	}
	if err := s.fenced("delete", jobID); err != nil {
		return err
	}
	s.resume(ctx)
	unlock, err := s.jobs.lock(ctx, jobID)
	if err != nil {
		return s.wrap("delete", jobID, err)
	}
	defer unlock()
	if err := s.fenced("delete", jobID); err != nil {
		return err
	}
	ll, err := listLatest(ctx, s.fs, s.ns, jobID)
	if err != nil {
		return err
	}
	if ll.deleting {
		// The job's deletion was interrupted: it has no checkpoints.
		return s.deleteJob(ctx, jobID)
	}
	pl := ll.of(pipelineID)
	b := pl.best()
	touches := b != nil && !b.list && slices.Max(checkpointIDs) >= b.id
	var intent string
	if touches {
		intent = latestPath(jobID, listPointerName(pipelineID, pl.nextSeq()))
		if err := s.touch(ctx, intent); err != nil {
			return err
		}
		for _, p := range pl.pointers {
			s.remove(ctx, []string{p.name}, "deleting a superseded pointer failed")
		}
		if err := s.syncDir(ctx, jobID+"/"+latestDir); err != nil {
			return err
		}
	}
	var errs []error
	for _, id := range checkpointIDs {
		n := s.path(jobID, pipelineID, id)
		if err := s.dfs.Remove(ctx, n); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
			errs = append(errs, s.wrap("delete", n, err))
		}
	}
	if err := s.syncDir(ctx, jobID); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil || !touches {
		return err
	}
	l, err := listJob(ctx, s.fs, s.ns, jobID, false)
	if err != nil {
		return err
	}
	if newest := l.newest(pipelineID); newest >= 0 {
		if err := s.touch(ctx, latestPath(jobID, pointerName(pipelineID, pl.nextSeq()+1, newest))); err != nil {
			return err
		}
		s.remove(ctx, []string{intent}, "deleting a superseded pointer failed")
	} else {
		s.remove(ctx, []string{intent, latestPath(jobID, markerName(pipelineID))}, "deleting the pointer of an emptied pipeline failed")
	}
	return nil
}
