package checkpoint

import (
	"context"
	"errors"
	"fmt"

	"github.com/stowage/stowage/fsbackend"
)

// finder reads the checkpoints of one namespace: the lookups of FileStorage
// and of Show share it, so that both give the same answer.
type finder struct {
	fs fsbackend.FS // below the namespace
	ns string
	// report is told of every damaged file a lookup skipped; it may be nil.
	report func(Damage)
}

// jobView is what a lookup knows of one job: its latest directory, and
// the listing of the whole job once something needed it.
type jobView struct {
	job     string
	latest  latestListing
	listing *jobListing
}

func (v *jobView) list(ctx context.Context, f finder) (*jobListing, error) {
	if v.listing == nil {
		l, err := listJob(ctx, f.fs, f.ns, v.job, !v.latest.complete || v.latest.deleting)
		if err != nil {
			return nil, err
		}
		v.listing = &l
	}
	return v.listing, nil
}

func (f finder) view(ctx context.Context, job string) (*jobView, error) {
	ll, err := listLatest(ctx, f.fs, f.ns, job)
	if err != nil {
		return nil, err
	}
	return &jobView{job: job, latest: ll}, nil
}

func noReadable(job string, pipeline int) error {
	return fmt.Errorf("%w: job %q pipeline %d has no readable checkpoint", ErrNotFound, job, pipeline)
}

// read reads and checks one checkpoint file and returns it with the
// file's size.
func (f finder) read(ctx context.Context, job string, pipeline int, id int64) (PipelineState, int64, error) {
	name := job + "/" + FileName(pipeline, id)
	data, err := fsbackend.ReadFile(ctx, f.fs, name)
	if errors.Is(err, fsbackend.ErrNotExist) {
		return PipelineState{}, 0, fmt.Errorf("%w: job %q pipeline %d checkpoint %d", ErrNotFound, job, pipeline, id)
	}
	if err != nil {
		return PipelineState{}, 0, fmt.Errorf("stowage/checkpoint: read %s: %w", f.ns+name, err)
	}
	st, derr := decode(data)
	dmg := Damage{Job: job, Pipeline: pipeline, CheckpointID: id, File: f.ns + name}
	if derr != nil {
		dmg.Offset, dmg.Reason = derr.Offset, derr.Reason
		if derr.Err != nil {
			dmg.Reason += ": " + derr.Err.Error()
		}
		return PipelineState{}, int64(len(data)), &CorruptError{Damage: dmg}
	}
	if st.JobID != job || st.PipelineID != pipeline || st.CheckpointID != id {
		dmg.Reason = fmt.Sprintf("header holds job %q pipeline %d checkpoint %d, which does not match the file name", st.JobID, st.PipelineID, st.CheckpointID)
		return PipelineState{}, int64(len(data)), &CorruptError{Damage: dmg}
	}
	return st, int64(len(data)), nil
}

// skippable reports whether a lookup may pass over err to an older
// checkpoint: a damaged file (reported) or one that vanished since it was
// found (retention).
func (f finder) skippable(err error) bool {
	var ce *CorruptError
	if errors.As(err, &ce) {
		if f.report != nil {
			f.report(ce.Damage)
		}
		return true
	}
	return errors.Is(err, ErrNotFound)
}

// latest returns the latest readable checkpoint of one pipeline. With a
// pointer it costs one Stat per id that follows the pointer's (normally
// one) and one read, whatever the number of checkpoints; without one, or
// when the checkpoint it leads to is missing or damaged, it lists the job
// and reads from the highest id down, passing over damaged files.
func (f finder) latest(ctx context.Context, v *jobView, pipeline int) (PipelineState, int64, error) {
	if v.latest.deleting {
		return PipelineState{}, 0, noReadable(v.job, pipeline)
	}
	pl := v.latest.of(pipeline)
	if pl == nil && v.latest.complete && v.listing == nil {
		// Every pipeline with checkpoints has a marker: this one has none.
		return PipelineState{}, 0, noReadable(v.job, pipeline)
	}
	tried := int64(-1)
	id, ok, err := resolve(ctx, f.fs, f.ns, v.job, pipeline, pl.best())
	if err != nil {
		return PipelineState{}, 0, err
	}
	if ok {
		st, size, err := f.read(ctx, v.job, pipeline, id)
		if err == nil {
			return st, size, nil
		}
		if !f.skippable(err) {
			return PipelineState{}, 0, err
		}
		tried = id
	}
	l, err := v.list(ctx, f)
	if err != nil {
		return PipelineState{}, 0, err
	}
	if l.latest.deleting {
		return PipelineState{}, 0, noReadable(v.job, pipeline)
	}
	for _, id := range l.ids(pipeline) {
		if id == tried {
			continue
		}
		st, size, err := f.read(ctx, v.job, pipeline, id)
		if err == nil {
			return st, size, nil
		}
		if !f.skippable(err) {
			return PipelineState{}, 0, err
		}
	}
	return PipelineState{}, 0, noReadable(v.job, pipeline)
}

// pipelines returns the pipelines of the job that may have checkpoints:
// from the latest directory once it is complete, else from a listing.
func (f finder) pipelines(ctx context.Context, v *jobView) ([]int, error) {
	if v.latest.deleting {
		return nil, nil
	}
	if v.latest.complete {
		out := make([]int, 0, len(v.latest.pipelines))
		for _, p := range v.latest.pipelines {
			out = append(out, p.pipeline)
		}
		return out, nil
	}
	l, err := v.list(ctx, f)
	if err != nil {
		return nil, err
	}
	if l.latest.deleting {
		return nil, nil
	}
	return l.pipelines(), nil
}

// readAll reads the given entries, skipping damaged and vanished files.
func (f finder) readAll(ctx context.Context, job string, es []entry) ([]PipelineState, error) {
	out := make([]PipelineState, 0, len(es))
	for _, e := range es {
		st, _, err := f.read(ctx, job, e.pipeline, e.id)
		if err != nil {
			if f.skippable(err) {
				continue
			}
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func (s *FileStorage) finder() finder {
	return finder{fs: s.fs, ns: s.ns, report: s.reportDamage}
}

// reportDamage logs a damaged file that a read skipped and tells
// Options.OnDamage.
func (s *FileStorage) reportDamage(d Damage) {
	s.log.Warn("stowage/checkpoint: skipping damaged checkpoint", "file", d.File, "offset", d.Offset, "reason", d.Reason)
	if s.onDamage != nil {
		s.onDamage(d)
	}
}

// GetAllCheckpoints implements Storage. It lists the job.
func (s *FileStorage) GetAllCheckpoints(ctx context.Context, jobID string) ([]PipelineState, error) {
	if err := s.check(jobID); err != nil {
		return nil, err
	}
	l, err := listJob(ctx, s.fs, s.ns, jobID, true)
	if err != nil || l.latest.deleting {
		return nil, err
	}
	return s.finder().readAll(ctx, jobID, l.files)
}

// GetCheckpointsByJobAndPipeline implements Storage. It lists the job.
func (s *FileStorage) GetCheckpointsByJobAndPipeline(ctx context.Context, jobID string, pipelineID int) ([]PipelineState, error) {
	if err := s.check(jobID); err != nil {
		return nil, err
	}
	l, err := listJob(ctx, s.fs, s.ns, jobID, true)
	if err != nil || l.latest.deleting {
		return nil, err
	}
	var es []entry
	for _, e := range l.files {
		if e.pipeline == pipelineID {
			es = append(es, e)
		}
	}
	return s.finder().readAll(ctx, jobID, es)
}

// GetLatestCheckpointByJobAndPipeline implements Storage. It lists the
// job's latest directory, follows the pipeline's pointer (a Stat of the
// next id, normally) and reads one file, whatever the number of
// checkpoints kept. Where there is no pointer, or the checkpoint it leads
// to is missing or damaged (reported: log warning and Options.OnDamage),
// it lists the job and reads from the highest id down.
func (s *FileStorage) GetLatestCheckpointByJobAndPipeline(ctx context.Context, jobID string, pipelineID int) (PipelineState, error) {
	if err := s.check(jobID); err != nil {
		return PipelineState{}, err
	}
	f := s.finder()
	v, err := f.view(ctx, jobID)
	if err != nil {
		return PipelineState{}, err
	}
	st, _, err := f.latest(ctx, v, pipelineID)
	return st, err
}

// GetLatestCheckpoint implements Storage, as
// GetLatestCheckpointByJobAndPipeline for each pipeline of the job, which
// the latest directory names. A pipeline with no readable checkpoint is
// left out.
func (s *FileStorage) GetLatestCheckpoint(ctx context.Context, jobID string) ([]PipelineState, error) {
	if err := s.check(jobID); err != nil {
		return nil, err
	}
	f := s.finder()
	v, err := f.view(ctx, jobID)
	if err != nil {
		return nil, err
	}
	pipelines, err := f.pipelines(ctx, v)
	if err != nil {
		return nil, err
	}
	var out []PipelineState
	for _, p := range pipelines {
		st, _, err := f.latest(ctx, v, p)
		switch {
		case err == nil:
			out = append(out, st)
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	return out, nil
}

// GetCheckpoint implements Storage. A checkpoint of a job whose deletion
// was interrupted is not found.
func (s *FileStorage) GetCheckpoint(ctx context.Context, jobID string, pipelineID int, checkpointID int64) (PipelineState, error) {
	if err := s.check(jobID); err != nil {
		return PipelineState{}, err
	}
	if err := validIDs(pipelineID, checkpointID); err != nil {
		return PipelineState{}, err
	}
	st, _, err := s.finder().read(ctx, jobID, pipelineID, checkpointID)
	if err != nil {
		return PipelineState{}, err
	}
	for _, tomb := range []string{deletionMark(jobID), latestPath(jobID, deletingName)} {
		switch _, err := s.fs.Stat(ctx, tomb); {
		case err == nil:
			return PipelineState{}, fmt.Errorf("%w: job %q is being deleted", ErrNotFound, jobID)
		case !errors.Is(err, fsbackend.ErrNotExist):
			return PipelineState{}, s.wrap("stat", tomb, err)
		}
	}
	return st, nil
}
