package checkpoint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/stowage/stowage/fsbackend"
)

// StoreCheckpoint implements Storage. The file is written atomically: to a
// temporary name then renamed where the back end renames atomically,
// otherwise by a conditional create of the final name (one PUT on object
// stores). Storing the same checkpoint again with the same state succeeds;
// with another state it fails with ErrExists. Stores (and deletes) of one
// job through one FileStorage take turns, so when stores of one checkpoint
// run concurrently the first succeeds and each with a different state
// fails with ErrExists. (On the rename path the exists check and the
// rename are two steps, so two processes storing the same checkpoint at
// once are not ordered against each other; a job's checkpoints have one
// writer.)
//
// Before the checkpoint can be seen, the job's latest directory already
// leads a lookup to it (FORMAT.md); after it, the pipeline's pointer is
// moved to it. Once the new file is durable and reads back identical,
// checkpoints of the pipeline beyond the newest MaxRetained are deleted; a
// failed deletion is logged and retried by the next store, it does not
// fail this one. A checkpoint older than the newest MaxRetained of its
// pipeline is deleted again at once. On back ends where directory entries
// need a directory sync (local disk), one sync of the job's directory
// makes the new file and the deletions durable together, before the call
// returns.
func (s *FileStorage) StoreCheckpoint(ctx context.Context, st PipelineState) (string, error) {
	if err := s.check(st.JobID); err != nil {
		return "", err
	}
	if err := validIDs(st.PipelineID, st.CheckpointID); err != nil {
		return "", err
	}
	if err := s.fenced("store", s.path(st.JobID, st.PipelineID, st.CheckpointID)); err != nil {
		return "", err
	}
	return s.store(ctx, st)
}

// storeState is what one store knows of its pipeline.
type storeState struct {
	v       *jobView
	newest  int64 // latest checkpoint id of the pipeline before this store, -1 if none
	known   bool  // newest came from a pointer: lookups follow it by probing the next ids
	seq     int64 // seq of the next pointer
	written []string
}

func (s *FileStorage) store(ctx context.Context, st PipelineState) (string, error) {
	job, pipeline, id := st.JobID, st.PipelineID, st.CheckpointID
	name := s.path(job, pipeline, id)
	s.resume(ctx)
	// The exists check and the rename of write are two steps, and the
	// latest directory is read, then changed: without the lock two stores
	// of one job could interleave.
	unlock, err := s.jobs.lock(ctx, job)
	if err != nil {
		return "", s.wrap("store", name, err)
	}
	defer unlock()
	f := s.finder()
	v, err := f.view(ctx, job)
	if err != nil {
		return "", err
	}
	if !v.latest.deleting && !v.latest.complete {
		// A job whose latest directory is not complete may be one whose
		// deletion stopped after that directory was emptied: its listing
		// (which prepare needs anyway) looks for the deletion mark.
		l, err := v.list(ctx, f)
		if err != nil {
			return "", err
		}
		v.latest.deleting = l.latest.deleting
	}
	if v.latest.deleting {
		// A deletion of the job was interrupted. Finish it first: the
		// new checkpoint must not be hidden by its marker.
		if err := s.deleteJob(ctx, job); err != nil {
			return "", err
		}
		v = &jobView{job: job}
	}
	ss := &storeState{v: v, newest: -1}
	pl := v.latest.of(pipeline)
	ss.seq = pl.nextSeq()
	if ss.newest, ss.known, err = resolve(ctx, s.fs, s.ns, job, pipeline, pl.best()); err != nil {
		return "", err
	}
	if !ss.known {
		l, err := v.list(ctx, f)
		if err != nil {
			return "", err
		}
		ss.newest = l.newest(pipeline)
	}
	// Asked again right before anything is written: an asynchronous
	// store may have waited in the queue, a store for the job's lock.
	if err := s.fenced("store", name); err != nil {
		return "", err
	}
	if err := s.prepare(ctx, st, ss); err != nil {
		return "", err
	}
	fr := frame(st)
	// The pointer's last probe found no file at newest+1.
	absent := ss.known && id == ss.newest+1
	if err := s.write(ctx, st, name, fr, absent, true); err != nil {
		return "", err
	}
	s.movePointer(ctx, st, ss)
	late, err := s.retain(ctx, st, ss, name, fr)
	if err != nil {
		return "", err
	}
	if err := s.syncDir(ctx, job); err != nil {
		return "", err
	}
	if len(late) > 0 {
		s.retire(ctx, late)
		if err := s.syncDir(ctx, job); err != nil {
			s.log.Warn("stowage/checkpoint: syncing retired checkpoints' deletion failed", "job", job, "error", err)
		}
	}
	if !v.latest.complete {
		// Every pipeline of the job now has a durable marker (prepare).
		if err := s.touch(ctx, latestPath(job, completeName)); err != nil {
			s.log.Warn("stowage/checkpoint: marking the job's latest directory complete failed", "job", job, "error", err)
		}
	}
	return FileName(pipeline, id), nil
}

// prepare makes the job's latest directory lead lookups to the checkpoint
// before it can be seen, and durably so: a pipeline marker for a
// pipeline's first checkpoint (and, for a job written before the latest
// directory existed, for every pipeline found), and when the id does not
// follow the pointer's latest one by one, a pointer that says to list.
// Where nothing needs writing, nothing is synced.
func (s *FileStorage) prepare(ctx context.Context, st PipelineState, ss *storeState) error {
	job, pipeline, id := st.JobID, st.PipelineID, st.CheckpointID
	v := ss.v
	pl := v.latest.of(pipeline)
	changed := false
	if pl == nil || !pl.marker {
		if err := s.touch(ctx, latestPath(job, markerName(pipeline))); err != nil {
			return err
		}
		changed = true
	}
	if !v.latest.complete {
		l, err := v.list(ctx, s.finder())
		if err != nil {
			return err
		}
		for _, q := range l.pipelines() {
			ql := v.latest.of(q)
			if q == pipeline || (ql != nil && ql.marker) {
				continue
			}
			if err := s.touch(ctx, latestPath(job, markerName(q))); err != nil {
				return err
			}
			if ql.best() == nil {
				if err := s.touch(ctx, latestPath(job, pointerName(q, 1, l.newest(q)))); err != nil {
					return err
				}
			}
		}
		changed = true // the markers seen may not have been synced yet
	}
	if ss.known && id > ss.newest+1 {
		// Lookups would probe newest+1 and stop: until the pointer is
		// moved, they must list.
		intent := latestPath(job, listPointerName(pipeline, ss.seq))
		if err := s.touch(ctx, intent); err != nil {
			return err
		}
		ss.seq++
		ss.written = append(ss.written, intent)
		for _, p := range pl.pointers {
			s.remove(ctx, []string{p.name}, "deleting a superseded pointer failed")
		}
		pl.pointers = nil
		changed = true
	}
	if changed {
		return s.syncDir(ctx, job+"/"+latestDir)
	}
	return nil
}

// movePointer points the pipeline's pointer at its latest checkpoint, now
// the stored one or an older one kept. It is an aid, not a guarantee:
// what prepare left already leads lookups right (the old pointer's next
// id is the new one, or a pointer says to list), so a failure is logged,
// and the pointer needs no sync. Where renames are atomic the old pointer
// is renamed to the new name (no file is created, and there is never a
// moment without a pointer or with two); elsewhere the new one is created
// and the old removed.
func (s *FileStorage) movePointer(ctx context.Context, st PipelineState, ss *storeState) {
	job, pipeline := st.JobID, st.PipelineID
	top := max(ss.newest, st.CheckpointID)
	pl := ss.v.latest.of(pipeline)
	if b := pl.best(); ss.known && len(ss.written) == 0 && b != nil && !b.list && b.id == top && len(pl.pointers) == 1 {
		return
	}
	name := latestPath(job, pointerName(pipeline, ss.seq, top))
	old := slices.Clone(ss.written)
	if pl != nil {
		for _, p := range pl.pointers {
			old = append(old, p.name)
		}
	}
	moved := false
	if s.rename && len(old) > 0 {
		if err := s.dfs.Rename(ctx, old[0], name); err == nil {
			moved, old = true, old[1:]
		}
	}
	if !moved {
		if err := s.touch(ctx, name); err != nil {
			s.log.Warn("stowage/checkpoint: moving the latest pointer failed", "file", s.ns+name, "error", err)
			return
		}
	}
	s.remove(ctx, old, "deleting a superseded pointer failed")
}

// retain deletes the checkpoints of st's pipeline beyond the newest keep,
// as found in storage now, so that the limit survives restarts. It returns
// the names to delete only after the new checkpoint is durable: with
// MaxRetained 1 on a back end whose syncs are deferred, the one deleted is
// the previous latest.
func (s *FileStorage) retain(ctx context.Context, st PipelineState, ss *storeState, name string, fr frames) ([]string, error) {
	if s.keep < 0 {
		return nil, nil
	}
	job, pipeline, id := st.JobID, st.PipelineID, st.CheckpointID
	l, err := ss.v.list(ctx, s.finder())
	if err != nil {
		s.log.Warn("stowage/checkpoint: listing for retention failed", "job", job, "error", err)
		return nil, nil
	}
	ids := l.ids(pipeline) // descending; from before this store when the pointer was missing
	if !slices.Contains(ids, id) {
		ids = append(ids, id)
		slices.SortFunc(ids, func(a, b int64) int { return cmp.Compare(b, a) })
	}
	if len(ids) <= s.keep {
		return nil, nil
	}
	cut := ids[s.keep-1] // oldest id that stays
	if id >= cut {
		// Before deleting older checkpoints, make sure the new one is
		// there and reads back exactly as written.
		same, err := fr.readBack(ctx, s.fs, name)
		if err != nil {
			return nil, s.wrap("read back", name, err)
		}
		if !same {
			return nil, fmt.Errorf("%w: %s reads back different bytes than were written", ErrCorrupt, s.ns+name)
		}
	}
	var doomed, temps []string
	for _, old := range ids[s.keep:] {
		doomed = append(doomed, s.path(job, pipeline, old))
	}
	spare := s.peekSpare(job)
	for _, t := range l.temps {
		if t.pipeline == pipeline && t.id < cut && t.name != spare {
			temps = append(temps, t.name)
		}
	}
	s.reapLater(temps)
	if s.deferred && s.keep == 1 {
		return doomed, nil
	}
	s.retire(ctx, doomed)
	return nil, nil
}

// retire deletes retired checkpoints. Where syncs are deferred (local
// disk) it renames each out of the way, which is quick, and leaves the
// deletion, which frees the file's space and is not, to the background:
// the next directory sync makes the renames durable, and a retired file a
// crash leaves behind is a leftover that retention or a job delete
// removes. Elsewhere it deletes them. Failures are logged.
func (s *FileStorage) retire(ctx context.Context, names []string) {
	if !s.deferred || !s.rename {
		s.remove(ctx, names, "deleting retired checkpoint failed")
		return
	}
	var gone []string
	for _, n := range names {
		err := s.dfs.Rename(ctx, n, n+retiredSuffix)
		switch {
		case err == nil:
			gone = append(gone, n+retiredSuffix)
		case !errors.Is(err, fsbackend.ErrNotExist):
			s.log.Warn("stowage/checkpoint: retiring checkpoint failed", "file", s.ns+n, "error", err)
		}
	}
	if len(gone) > 0 && s.keepSpare(gone[0]) {
		gone = gone[1:]
	}
	s.reapLater(gone)
}

// keepSpare keeps a retired file (name relative to the namespace) as its
// job's spare, for the job's next store to write over, unless the job
// has one. It reports whether it kept it.
func (s *FileStorage) keepSpare(name string) bool {
	if s.recycler == nil {
		return false
	}
	job, _, _ := strings.Cut(name, "/")
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	if _, has := s.spare[job]; has || s.reapClosedLocked() {
		return false
	}
	s.spare[job] = name
	return true
}

// takeSpare returns the job's spare and forgets it, or "".
func (s *FileStorage) takeSpare(job string) string {
	if s.recycler == nil {
		return ""
	}
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	n := s.spare[job]
	delete(s.spare, job)
	return n
}

// peekSpare returns the job's spare, or "".
func (s *FileStorage) peekSpare(job string) string {
	if s.recycler == nil {
		return ""
	}
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	return s.spare[job]
}

// write writes the checkpoint file, or finds it already stored. absent
// says a Stat just found no file at name (on the rename path, the exists
// check is then not repeated).
func (s *FileStorage) write(ctx context.Context, st PipelineState, name string, fr frames, absent, retry bool) error {
	var err error
	if s.rename && !absent {
		if _, serr := s.fs.Stat(ctx, name); serr == nil {
			err = fsbackend.ErrExist
		} else if !errors.Is(serr, fsbackend.ErrNotExist) {
			return s.wrap("stat", name, serr)
		} else {
			err = s.writeFile(ctx, name, fr)
		}
	} else {
		err = s.writeFile(ctx, name, fr)
	}
	if err == nil {
		return nil
	}
	if !errors.Is(err, fsbackend.ErrExist) {
		return s.wrap("store", name, err)
	}
	// The name is taken: a retry of a store that did succeed is fine, a
	// damaged leftover is replaced, anything else is a conflict.
	old, _, rerr := s.finder().read(ctx, st.JobID, st.PipelineID, st.CheckpointID)
	switch {
	case rerr == nil && string(old.States) == string(st.States):
		return nil
	case errors.Is(rerr, ErrCorrupt) && retry:
		s.log.Warn("stowage/checkpoint: replacing damaged checkpoint file", "file", s.ns+name, "error", rerr)
		if err := s.fs.Remove(ctx, name); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
			return s.wrap("remove", name, err)
		}
		return s.write(ctx, st, name, fr, false, false)
	case rerr == nil:
		return fmt.Errorf("%w: %s", ErrExists, s.ns+name)
	default:
		return rerr
	}
}

// writeFile writes the frames to name: to a temporary name renamed onto
// it where renames are atomic, else by a conditional create of name.
// Where syncs are deferred, the bytes are synced before the rename and the
// directory is left to the caller.
func (s *FileStorage) writeFile(ctx context.Context, name string, fr frames) error {
	target := name
	if s.rename {
		target = name + tmpMarker + randomSuffix()
	}
	w, err := s.createOrRecycle(ctx, name, target)
	if err != nil {
		return err
	}
	if err := fr.writeTo(w); err != nil {
		_ = w.Abort()
		return err
	}
	if s.deferred {
		if err := w.Sync(); err != nil {
			_ = w.Abort()
			return err
		}
	}
	if err := w.Close(); err != nil {
		_ = w.Abort()
		return err
	}
	if !s.rename {
		return nil
	}
	if err := s.dfs.Rename(ctx, target, name); err != nil {
		_ = s.dfs.Remove(ctx, target)
		return err
	}
	return nil
}

// createOrRecycle creates target, or, where the job has a spare retired
// file (local disk, retention on), renames that to target and writes it
// over: its blocks are reused instead of freed while as many are
// allocated for the new file. target is a temporary name, read by nothing
// until the finished file is renamed to name.
func (s *FileStorage) createOrRecycle(ctx context.Context, name, target string) (fsbackend.Writer, error) {
	job, _, _ := strings.Cut(name, "/")
	if spare := s.takeSpare(job); spare != "" && target != name {
		w, err := s.recycler.Recycle(ctx, spare, target)
		if err == nil {
			return w, nil
		}
		if !errors.Is(err, fsbackend.ErrNotExist) {
			s.log.Warn("stowage/checkpoint: writing over a retired checkpoint failed; creating a new file", "file", s.ns+spare, "error", err)
			s.reapLater([]string{spare})
		}
	}
	return s.dfs.Create(ctx, target)
}

// touch creates an empty file (a marker or pointer, whose name is all it
// says) unless it exists. Where syncs are deferred it is not synced.
func (s *FileStorage) touch(ctx context.Context, name string) error {
	w, err := s.dfs.Create(ctx, name)
	if errors.Is(err, fsbackend.ErrExist) {
		return nil
	}
	if err != nil {
		return s.wrap("create", name, err)
	}
	if err := w.Close(); err != nil {
		_ = w.Abort()
		return s.wrap("create", name, err)
	}
	return nil
}

// remove deletes files without a directory sync each where syncs are
// deferred, logging failures with what; absent files are fine.
func (s *FileStorage) remove(ctx context.Context, names []string, what string) {
	for _, n := range names {
		if err := s.dfs.Remove(ctx, n); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
			s.log.Warn("stowage/checkpoint: "+what, "file", s.ns+n, "error", err)
		}
	}
}
