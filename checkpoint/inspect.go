package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// The inspection helpers below work on storage alone, with no Storage and
// no cluster: they back `stowage inspect checkpoints list|show|verify`.
// fsys is rooted at the storage root and namespace is the plugin-config
// namespace, exactly as for Open. Their results carry JSON tags so that the
// command can print them as text or with --json. They only read.

// CRC states of a CheckpointInfo.
const (
	CRCUnchecked = "unchecked" // the file was listed, not read
	CRCOK        = "ok"        // every frame and the state checksum check out
	CRCBad       = "bad"       // the file is damaged; see Damage
)

// Latest, as Show's checkpoint id, picks the latest readable checkpoint.
const Latest int64 = -1

// PipelineSummary describes the checkpoints of one pipeline by name only.
type PipelineSummary struct {
	Pipeline    int   `json:"pipeline"`
	Checkpoints int   `json:"checkpoints"`
	Oldest      int64 `json:"oldest_checkpoint_id"`
	Latest      int64 `json:"latest_checkpoint_id"`
}

// JobSummary describes one job directory of a namespace.
type JobSummary struct {
	Job       string            `json:"job"`
	Pipelines []PipelineSummary `json:"pipelines"`
	Files     int               `json:"files"`
	Bytes     int64             `json:"bytes"`
	// Temporary counts leftovers of interrupted writes (and retired files
	// not yet deleted); Stray counts other files that are not checkpoints.
	Temporary int `json:"temporary_files,omitempty"`
	Stray     int `json:"stray_files,omitempty"`
	// Deleting is set when the job is being deleted (or its deletion was
	// interrupted): the storage returns none of its checkpoints.
	Deleting bool `json:"deleting,omitempty"`
}

// CheckpointInfo describes one checkpoint file.
type CheckpointInfo struct {
	Job          string `json:"job"`
	Pipeline     int    `json:"pipeline"`
	CheckpointID int64  `json:"checkpoint_id"`
	// File is the name below the storage root, namespace included.
	File string `json:"file"`
	Size int64  `json:"size"`
	// StateLength and Created are known once the file was read.
	StateLength int64     `json:"state_length"`
	Created     time.Time `json:"created,omitzero"`
	CRC         string    `json:"crc"`
	Damage      *Damage   `json:"damage,omitempty"`
	// Skipped lists the damaged checkpoints with higher ids that Show,
	// asked for the latest, passed over to reach this one (highest
	// first); empty when the latest checkpoint read clean.
	Skipped []Damage `json:"skipped_damaged,omitempty"`
}

// Report is the result of Verify.
type Report struct {
	Namespace   string   `json:"namespace"`
	Jobs        int      `json:"jobs"`
	Checkpoints int      `json:"checkpoints"`
	Good        int      `json:"good"`
	Damaged     []Damage `json:"damaged"`
	// Temporary and Stray name files that are not checkpoints (leftovers
	// of interrupted writes; anything else). They are not damage.
	Temporary []string `json:"temporary,omitempty"`
	Stray     []string `json:"stray,omitempty"`
	// Deleting names the jobs being deleted (or whose deletion was
	// interrupted; the next delete or store of the job finishes it).
	Deleting []string `json:"deleting,omitempty"`
}

// OK reports whether no damage was found.
func (r Report) OK() bool { return len(r.Damaged) == 0 }

// VerifyOptions narrow and observe Verify.
type VerifyOptions struct {
	// Job limits the check to one job ("" checks every job).
	Job string
	// Progress, if set, is called after each file with the number of
	// files done and the total (for a progress bar).
	Progress func(done, total int)
}

func openNamespace(fsys fsbackend.FS, namespace string) (fsbackend.FS, string, error) {
	ns, dir, err := cleanNamespace(namespace)
	if err != nil {
		return nil, "", err
	}
	sub, err := fsbackend.Sub(fsys, dir)
	if err != nil {
		return nil, "", fmt.Errorf("stowage/checkpoint: key namespace: %q: %w", namespace, err)
	}
	return sub, ns, nil
}

// listNamespace groups every file of the namespace by job, in job order.
func listNamespace(ctx context.Context, sub fsbackend.FS, ns, job string) ([]string, map[string]jobListing, []string, error) {
	dir := ""
	if job != "" {
		if err := ValidJobID(job); err != nil {
			return nil, nil, nil, err
		}
		dir = job
	}
	fis, err := sub.List(ctx, dir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("stowage/checkpoint: list %s%s: %w", ns, dir, err)
	}
	var jobs, loose []string
	byJob := map[string][]fsbackend.FileInfo{}
	marked := map[string]bool{}
	if job != "" {
		switch _, err := sub.Stat(ctx, deletionMark(job)); {
		case err == nil:
			marked[job] = true
		case !errors.Is(err, fsbackend.ErrNotExist):
			return nil, nil, nil, fmt.Errorf("stowage/checkpoint: stat %s%s: %w", ns, deletionMark(job), err)
		}
	}
	for _, fi := range fis {
		j, rest, ok := strings.Cut(fi.Name, "/")
		if ok && j == LeaseRecords {
			continue // the namespace lease (fence.go)
		}
		if ok && j == deletionDir && ValidJobID(rest) == nil {
			marked[rest] = true
			continue
		}
		if ok && j == trashDir {
			continue // a deleted job's files, not yet unlinked
		}
		if !ok || ValidJobID(j) != nil {
			loose = append(loose, ns+fi.Name)
			continue
		}
		if _, seen := byJob[j]; !seen {
			jobs = append(jobs, j)
		}
		byJob[j] = append(byJob[j], fi)
	}
	var markOnly []string // jobs of which only the deletion mark is left
	for j := range marked {
		if _, seen := byJob[j]; !seen {
			markOnly = append(markOnly, j)
		}
	}
	slices.Sort(markOnly)
	jobs = append(jobs, markOnly...)
	out := make(map[string]jobListing, len(jobs))
	for _, j := range jobs {
		l := classify(j, byJob[j])
		if marked[j] {
			l.marked, l.latest.deleting = true, true
		}
		out[j] = l
	}
	return jobs, out, loose, nil
}

// Inspect summarises every job of a namespace from file names alone.
func Inspect(ctx context.Context, fsys fsbackend.FS, namespace string) ([]JobSummary, error) {
	sub, ns, err := openNamespace(fsys, namespace)
	if err != nil {
		return nil, err
	}
	return summarise(ctx, sub, ns)
}

// summarise summarises every job below sub (the namespace ns).
func summarise(ctx context.Context, sub fsbackend.FS, ns string) ([]JobSummary, error) {
	jobs, byJob, _, err := listNamespace(ctx, sub, ns, "")
	if err != nil {
		return nil, err
	}
	out := make([]JobSummary, 0, len(jobs))
	for _, j := range jobs {
		l := byJob[j]
		js := JobSummary{Job: j, Files: len(l.files), Temporary: len(l.temps), Stray: len(l.stray), Deleting: l.latest.deleting, Pipelines: []PipelineSummary{}}
		for _, e := range l.files {
			js.Bytes += e.size
			n := len(js.Pipelines)
			if n == 0 || js.Pipelines[n-1].Pipeline != e.pipeline {
				js.Pipelines = append(js.Pipelines, PipelineSummary{Pipeline: e.pipeline, Oldest: e.id})
				n++
			}
			ps := &js.Pipelines[n-1]
			ps.Checkpoints++
			ps.Latest = e.id
		}
		out = append(out, js)
	}
	return out, nil
}

// JobLister is implemented by storages that can summarise their jobs
// from a listing alone (FileStorage); a status page uses it.
type JobLister interface {
	Jobs(ctx context.Context) ([]JobSummary, error)
}

// Jobs summarises every job of the storage's namespace from file names
// alone, as Inspect does.
func (s *FileStorage) Jobs(ctx context.Context) ([]JobSummary, error) {
	return summarise(ctx, s.fs, s.ns)
}

var _ JobLister = (*FileStorage)(nil)

// List describes the checkpoint files of one job from the listing alone
// (CRC is CRCUnchecked; use Verify or Show to read them).
func List(ctx context.Context, fsys fsbackend.FS, namespace, job string) ([]CheckpointInfo, error) {
	if err := ValidJobID(job); err != nil {
		return nil, err
	}
	sub, ns, err := openNamespace(fsys, namespace)
	if err != nil {
		return nil, err
	}
	_, byJob, _, err := listNamespace(ctx, sub, ns, job)
	if err != nil {
		return nil, err
	}
	l := byJob[job]
	out := make([]CheckpointInfo, 0, len(l.files))
	for _, e := range l.files {
		out = append(out, CheckpointInfo{Job: job, Pipeline: e.pipeline, CheckpointID: e.id, File: ns + e.name, Size: e.size, CRC: CRCUnchecked})
	}
	return out, nil
}

// check reads one listed file and fills in what reading tells.
func check(ctx context.Context, sub fsbackend.FS, ns, job string, e entry) (CheckpointInfo, PipelineState, error) {
	ci := CheckpointInfo{Job: job, Pipeline: e.pipeline, CheckpointID: e.id, File: ns + e.name, Size: e.size}
	st, _, err := finder{fs: sub, ns: ns}.read(ctx, job, e.pipeline, e.id)
	var ce *CorruptError
	switch {
	case err == nil:
		ci.CRC, ci.StateLength, ci.Created = CRCOK, int64(len(st.States)), st.Created
	case errors.As(err, &ce):
		ci.CRC, ci.Damage = CRCBad, &ce.Damage
	default:
		return ci, st, err
	}
	return ci, st, nil
}

// Show reads one checkpoint and returns its description and state bytes.
// checkpointID Latest finds the latest exactly as
// GetLatestCheckpointByJobAndPipeline does (the job's latest directory,
// else a listing; damaged newer ones are skipped and listed in
// CheckpointInfo.Skipped, a job being deleted has none); a given id that
// is damaged is returned with CRC bad, a nil state and no error. A missing
// checkpoint gives ErrNotFound; so does Latest when none reads clean, the
// error then saying how many damaged ones were skipped.
func Show(ctx context.Context, fsys fsbackend.FS, namespace, job string, pipeline int, checkpointID int64) (CheckpointInfo, []byte, error) {
	if err := ValidJobID(job); err != nil {
		return CheckpointInfo{}, nil, err
	}
	sub, ns, err := openNamespace(fsys, namespace)
	if err != nil {
		return CheckpointInfo{}, nil, err
	}
	if checkpointID != Latest {
		if err := validIDs(pipeline, checkpointID); err != nil {
			return CheckpointInfo{}, nil, err
		}
		name := job + "/" + FileName(pipeline, checkpointID)
		fi, err := sub.Stat(ctx, name)
		if errors.Is(err, fsbackend.ErrNotExist) {
			return CheckpointInfo{}, nil, fmt.Errorf("%w: job %q pipeline %d checkpoint %d", ErrNotFound, job, pipeline, checkpointID)
		}
		if err != nil {
			return CheckpointInfo{}, nil, fmt.Errorf("stowage/checkpoint: stat %s: %w", ns+name, err)
		}
		ci, st, err := check(ctx, sub, ns, job, entry{pipeline: pipeline, id: checkpointID, name: name, size: fi.Size})
		if err != nil {
			return ci, nil, err
		}
		return ci, st.States, nil
	}
	// The latest: found as the storage finds it.
	var skipped []Damage
	f := finder{fs: sub, ns: ns, report: func(d Damage) { skipped = append(skipped, d) }}
	v, err := f.view(ctx, job)
	if err != nil {
		return CheckpointInfo{}, nil, err
	}
	st, size, err := f.latest(ctx, v, pipeline)
	if errors.Is(err, ErrNotFound) && len(skipped) > 0 {
		return CheckpointInfo{}, nil, fmt.Errorf("%w: job %q pipeline %d has no readable checkpoint (%d damaged, the latest %s)", ErrNotFound, job, pipeline, len(skipped), skipped[0].File)
	}
	if err != nil {
		return CheckpointInfo{}, nil, err
	}
	ci := CheckpointInfo{
		Job: job, Pipeline: pipeline, CheckpointID: st.CheckpointID, File: ns + job + "/" + FileName(pipeline, st.CheckpointID), Size: size,
		StateLength: int64(len(st.States)), Created: st.Created, CRC: CRCOK, Skipped: skipped,
	}
	return ci, st.States, nil
}

// Verify reads every checkpoint file of the namespace (or of one job) and
// reports each damaged one. The error is only for failures to list or
// read; damage is in the Report (Report.OK).
func Verify(ctx context.Context, fsys fsbackend.FS, namespace string, opts VerifyOptions) (Report, error) {
	sub, ns, err := openNamespace(fsys, namespace)
	if err != nil {
		return Report{}, err
	}
	jobs, byJob, loose, err := listNamespace(ctx, sub, ns, opts.Job)
	if err != nil {
		return Report{}, err
	}
	r := Report{Namespace: ns, Jobs: len(jobs), Damaged: []Damage{}, Stray: loose}
	total := 0
	for _, j := range jobs {
		total += len(byJob[j].files)
	}
	done := 0
	for _, j := range jobs {
		l := byJob[j]
		if l.latest.deleting {
			r.Deleting = append(r.Deleting, j)
		}
		for _, e := range l.temps {
			r.Temporary = append(r.Temporary, ns+e.name)
		}
		for _, e := range l.stray {
			r.Stray = append(r.Stray, ns+e.name)
		}
		for _, e := range l.files {
			ci, _, err := check(ctx, sub, ns, j, e)
			if errors.Is(err, ErrNotFound) {
				// Deleted since the listing (retention): not damage.
			} else if err != nil {
				return r, err
			} else {
				r.Checkpoints++
				if ci.Damage != nil {
					r.Damaged = append(r.Damaged, *ci.Damage)
				} else {
					r.Good++
				}
			}
			done++
			if opts.Progress != nil {
				opts.Progress(done, total)
			}
		}
	}
	return r, nil
}
