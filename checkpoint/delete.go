package checkpoint

import (
	"context"
	"errors"
	"slices"

	"github.com/stowage/stowage/fsbackend"
)

// DeleteCheckpoint implements Storage: every file of the job's directory
// goes, temporary leftovers included. A marker written first (and synced)
// makes every lookup treat the job as deleted; the files are then removed
// without a directory sync each, the directories synced once, and the
// marker removed last. Should the deletion stop midway (an error, a
// crash), the job reads as deleted until the next DeleteCheckpoint or
// StoreCheckpoint of it finishes the work: nothing of it is returned half
// deleted.
func (s *FileStorage) DeleteCheckpoint(ctx context.Context, jobID string) error {
	if err := s.check(jobID); err != nil {
		return err
	}
	unlock, err := s.jobs.lock(ctx, jobID)
	if err != nil {
		return s.wrap("delete", jobID, err)
	}
	defer unlock()
	return s.deleteJob(ctx, jobID)
}

// deleteJob deletes the job; the caller holds its lock.
func (s *FileStorage) deleteJob(ctx context.Context, job string) error {
	l, err := listJob(ctx, s.fs, s.ns, job)
	if err != nil {
		return err
	}
	if len(l.all) == 0 {
		return nil
	}
	tomb := latestPath(job, deletingName)
	if !l.latest.deleting {
		if err := s.touch(ctx, tomb); err != nil {
			return err
		}
		if err := s.syncDir(ctx, job+"/"+latestDir); err != nil {
			return err
		}
	}
	var errs []error
	for _, e := range l.all {
		if e.name == tomb {
			continue
		}
		if err := s.dfs.Remove(ctx, e.name); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
			errs = append(errs, s.wrap("delete", e.name, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...) // the marker stays: the job reads as deleted
	}
	if err := s.syncDir(ctx, job); err != nil {
		return err
	}
	if err := s.syncDir(ctx, job+"/"+latestDir); err != nil {
		return err
	}
	// Through the FS itself: durable, and on the local disk it also
	// removes the emptied directories.
	if err := s.fs.Remove(ctx, tomb); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
		return s.wrap("delete", tomb, err)
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
	unlock, err := s.jobs.lock(ctx, jobID)
	if err != nil {
		return s.wrap("delete", jobID, err)
	}
	defer unlock()
	ll, err := listLatest(ctx, s.fs, s.ns, jobID)
	if err != nil {
		return err
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
	l, err := listJob(ctx, s.fs, s.ns, jobID)
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
