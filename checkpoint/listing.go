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

// entry is one file of a job directory whose name parses.
type entry struct {
	pipeline int
	id       int64
	name     string // relative to the namespace
	size     int64
}

// jobListing is a job directory as one listing found it.
type jobListing struct {
	files  []entry // checkpoint files, sorted by pipeline then id
	temps  []entry // leftovers of interrupted atomic writes, and retired files not yet deleted
	stray  []entry // anything else
	latest latestListing
	all    []entry // every file, the latest directory's included
	// marked: the job's file in the namespace's deletion directory
	// exists (latest.deleting is then set too).
	marked bool
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

// pipelines returns the pipeline ids that have checkpoint files, ascending.
func (l jobListing) pipelines() []int {
	var out []int
	for _, e := range l.files {
		if n := len(out); n == 0 || out[n-1] != e.pipeline {
			out = append(out, e.pipeline)
		}
	}
	return out
}

// newest returns the highest checkpoint id of a pipeline, or -1.
func (l jobListing) newest(pipeline int) int64 {
	newest := int64(-1)
	for _, e := range l.files {
		if e.pipeline == pipeline {
			newest = max(newest, e.id)
		}
	}
	return newest
}

// The deletion directory of a namespace, <namespace>..deleting/, holds an
// empty file named after each job whose deletion has begun and not
// finished. Its name holds "..", which no job id may, so it is never
// taken for a job's directory.
const deletionDir = "..deleting"

// The trash directory of a namespace, <namespace>..trash/, holds the
// directories of deleted jobs, each renamed there whole (on back ends
// with fsbackend.DirRenamer) under a name of its own, until they are
// unlinked. Its name holds "..", as the deletion directory's does.
const trashDir = "..trash"

// deletionMark returns the name of the job's file in the deletion
// directory.
func deletionMark(job string) string { return deletionDir + "/" + job }

// listJob lists every file of a job: a cost that grows with the number of
// checkpoints, paid by the calls that need them all and by lookups that
// fall back from a pointer. With marks it also looks for the job's
// deletion mark (one Stat), which a listing of a job whose latest
// directory is complete and not marked deleting can do without: such a
// job's deletion has not begun.
func listJob(ctx context.Context, fsys fsbackend.FS, ns, job string, marks bool) (jobListing, error) {
	fis, err := fsys.List(ctx, job)
	if err != nil {
		return jobListing{}, fmt.Errorf("stowage/checkpoint: list %s%s: %w", ns, job, err)
	}
	l := classify(job, fis)
	if marks {
		switch _, err := fsys.Stat(ctx, deletionMark(job)); {
		case err == nil:
			l.marked, l.latest.deleting = true, true
		case !errors.Is(err, fsbackend.ErrNotExist):
			return jobListing{}, fmt.Errorf("stowage/checkpoint: stat %s%s: %w", ns, deletionMark(job), err)
		}
	}
	return l, nil
}

// classify sorts the files of one job directory into checkpoint files,
// temporary files, the latest directory and strays.
func classify(job string, fis []fsbackend.FileInfo) jobListing {
	l := jobListing{files: make([]entry, 0, len(fis)), all: make([]entry, 0, len(fis))}
	prefix := job + "/"
	var latest []fsbackend.FileInfo
	for _, fi := range fis {
		base, ok := strings.CutPrefix(fi.Name, prefix)
		if !ok {
			continue
		}
		e := entry{name: fi.Name, size: fi.Size}
		l.all = append(l.all, e)
		if p, id, ok := ParseFileName(base); ok {
			e.pipeline, e.id = p, id
			l.files = append(l.files, e)
		} else if p, id, ok := parseTempName(base); ok {
			e.pipeline, e.id = p, id
			l.temps = append(l.temps, e)
		} else if p, id, ok := parseRetiredName(base); ok {
			e.pipeline, e.id = p, id
			l.temps = append(l.temps, e)
		} else if strings.HasPrefix(base, latestDir+"/") {
			latest = append(latest, fi)
		} else {
			l.stray = append(l.stray, e)
		}
	}
	l.latest = parseLatest(job, latest)
	l.stray = append(l.stray, l.latest.other...)
	// List is sorted by name and the names sort by (pipeline, id), but do
	// not rely on a back end's collation.
	if !slices.IsSortedFunc(l.files, compareEntries) {
		slices.SortFunc(l.files, compareEntries)
	}
	return l
}

func compareEntries(a, b entry) int {
	if c := cmp.Compare(a.pipeline, b.pipeline); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}
