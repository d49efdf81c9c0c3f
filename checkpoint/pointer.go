package checkpoint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/stowage/stowage/fsbackend"
)

// The latest directory of a job, <job>/latest/, holds small files whose
// names alone carry what they say (their contents are empty and never
// read), so that one listing of a directory that does not grow with the
// number of checkpoints finds the latest checkpoint of every pipeline:
//
//	p<pipeline>                       the pipeline has checkpoints (a pipeline marker)
//	p<pipeline>-s<seq>-c<checkpoint>  pointer: the latest checkpoint is <checkpoint>,
//	                                  or the last of the ids that follow it one by one
//	p<pipeline>-s<seq>-list           pointer: find the latest by listing the job
//	complete                          every pipeline with checkpoints has a marker
//	deleting                          the job is being deleted: it has no checkpoints
//
// with the pipeline in 10 digits and seq and checkpoint in 19. Of several
// pointers of one pipeline the one with the highest seq counts. FORMAT.md
// says why each is written when, and what a crash can leave.
const (
	latestDir    = "latest"
	completeName = "complete"
	deletingName = "deleting"
	// maxProbes bounds how many ids past a pointer a lookup checks before
	// it lists the job instead.
	maxProbes = 16
)

// pointer is one parsed pointer name.
type pointer struct {
	seq  int64
	id   int64 // valid unless list
	list bool
	name string // relative to the namespace
}

// pipelineLatest is what the latest directory says of one pipeline.
type pipelineLatest struct {
	pipeline int
	marker   bool
	pointers []pointer // highest seq first
}

// best returns the pointer that counts, or nil.
func (p *pipelineLatest) best() *pointer {
	if p == nil || len(p.pointers) == 0 {
		return nil
	}
	return &p.pointers[0]
}

// nextSeq returns the seq of a pointer written now.
func (p *pipelineLatest) nextSeq() int64 {
	if b := p.best(); b != nil {
		return b.seq + 1
	}
	return 1
}

// latestListing is the parsed latest directory of one job.
type latestListing struct {
	complete, deleting bool
	pipelines          []pipelineLatest // by pipeline id
	other              []entry          // names that are none of the above
}

// of returns the pipeline's entry, or nil.
func (l *latestListing) of(pipeline int) *pipelineLatest {
	i, ok := slices.BinarySearchFunc(l.pipelines, pipeline, func(p pipelineLatest, id int) int { return cmp.Compare(p.pipeline, id) })
	if !ok {
		return nil
	}
	return &l.pipelines[i]
}

// names returns every file of the latest directory but the deletion
// marker, relative to the namespace.
func (l *latestListing) names(job string) []string {
	var out []string
	if l.complete {
		out = append(out, latestPath(job, completeName))
	}
	for _, p := range l.pipelines {
		if p.marker {
			out = append(out, latestPath(job, markerName(p.pipeline)))
		}
		for _, q := range p.pointers {
			out = append(out, q.name)
		}
	}
	for _, e := range l.other {
		out = append(out, e.name)
	}
	return out
}

// latestPath returns the name of a file in the job's latest directory.
func latestPath(job, base string) string { return job + "/" + latestDir + "/" + base }

func markerName(pipeline int) string { return fmt.Sprintf("p%010d", pipeline) }

func pointerName(pipeline int, seq, id int64) string {
	return fmt.Sprintf("p%010d-s%019d-c%019d", pipeline, seq, id)
}

func listPointerName(pipeline int, seq int64) string {
	return fmt.Sprintf("p%010d-s%019d-list", pipeline, seq)
}

// parseLatestName parses a pipeline marker or pointer name. It accepts
// exactly the names markerName, pointerName and listPointerName make.
func parseLatestName(base string) (pipeline int, p pointer, isMarker, ok bool) {
	if len(base) < 11 || base[0] != 'p' || !allDigits(base[1:11]) {
		return 0, pointer{}, false, false
	}
	pl, err := strconv.ParseUint(base[1:11], 10, 31)
	if err != nil {
		return 0, pointer{}, false, false
	}
	rest := base[11:]
	if rest == "" {
		return int(pl), pointer{}, true, true
	}
	if len(rest) < 22 || rest[:2] != "-s" || !allDigits(rest[2:21]) {
		return 0, pointer{}, false, false
	}
	seq, err := strconv.ParseUint(rest[2:21], 10, 63)
	if err != nil {
		return 0, pointer{}, false, false
	}
	p = pointer{seq: int64(seq)}
	switch tail := rest[21:]; {
	case tail == "-list":
		p.list = true
	case len(tail) == 21 && tail[:2] == "-c" && allDigits(tail[2:]):
		id, err := strconv.ParseUint(tail[2:], 10, 63)
		if err != nil {
			return 0, pointer{}, false, false
		}
		p.id = int64(id)
	default:
		return 0, pointer{}, false, false
	}
	return int(pl), p, false, true
}

// parseLatest sorts the files of a job's latest directory; names are
// relative to the namespace.
func parseLatest(job string, fis []fsbackend.FileInfo) latestListing {
	var l latestListing
	prefix := job + "/" + latestDir + "/"
	byPipeline := map[int]*pipelineLatest{}
	get := func(pl int) *pipelineLatest {
		p := byPipeline[pl]
		if p == nil {
			p = &pipelineLatest{pipeline: pl}
			byPipeline[pl] = p
		}
		return p
	}
	for _, fi := range fis {
		base, ok := strings.CutPrefix(fi.Name, prefix)
		if !ok {
			continue
		}
		switch base {
		case completeName:
			l.complete = true
			continue
		case deletingName:
			l.deleting = true
			continue
		}
		pl, p, isMarker, ok := parseLatestName(base)
		switch {
		case !ok:
			l.other = append(l.other, entry{name: fi.Name, size: fi.Size})
		case isMarker:
			get(pl).marker = true
		default:
			p.name = fi.Name
			pp := get(pl)
			pp.pointers = append(pp.pointers, p)
		}
	}
	for _, p := range byPipeline {
		slices.SortFunc(p.pointers, func(a, b pointer) int { return cmp.Compare(b.seq, a.seq) })
		l.pipelines = append(l.pipelines, *p)
	}
	slices.SortFunc(l.pipelines, func(a, b pipelineLatest) int { return cmp.Compare(a.pipeline, b.pipeline) })
	return l
}

// listLatest lists and parses the job's latest directory: one List call
// of a directory whose size does not depend on the number of checkpoints.
func listLatest(ctx context.Context, fsys fsbackend.FS, ns, job string) (latestListing, error) {
	dir := job + "/" + latestDir
	fis, err := fsys.List(ctx, dir)
	if err != nil {
		return latestListing{}, fmt.Errorf("stowage/checkpoint: list %s%s: %w", ns, dir, err)
	}
	return parseLatest(job, fis), nil
}

// resolve follows a pointer: the latest checkpoint is p.id, or the last
// of the ids after it that exist one after the other. ok is false when the
// pointer says to list, or when more than maxProbes ids follow (a listing
// is then the cheaper way). Only Stat calls are made.
func resolve(ctx context.Context, fsys fsbackend.FS, ns, job string, pipeline int, p *pointer) (id int64, ok bool, err error) {
	if p == nil || p.list {
		return 0, false, nil
	}
	id = p.id
	for range maxProbes {
		if id == math.MaxInt64 {
			return id, true, nil
		}
		name := job + "/" + FileName(pipeline, id+1)
		_, err := fsys.Stat(ctx, name)
		if errors.Is(err, fsbackend.ErrNotExist) {
			return id, true, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("stowage/checkpoint: stat %s: %w", ns+name, err)
		}
		id++
	}
	return 0, false, nil
}
