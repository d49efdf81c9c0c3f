package filestore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
)

// Files are read this many at once from back ends where a read is a
// round trip to a server (HDFS, object stores), so that the waits
// overlap; on local disk, where a read of the page cache is work for the
// processor, as many as there are processors (at least 2).
const sharedReadParallel = 16

func (s *Store) readParallel() int {
	if s.fs.Capabilities().DurableAppend {
		return max(2, runtime.GOMAXPROCS(0))
	}
	return sharedReadParallel
}

// readJob is one file a parallel read reads.
type readJob struct {
	size int64
	read func() error
}

// readAll runs jobs, the largest files first, at most readParallel at a
// time, and returns the first error.
func (s *Store) readAll(ctx context.Context, jobs []readJob) error {
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(jobs[b].size, jobs[a].size) })
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, s.readParallel())
	prog := progressOf(ctx)
	prog.expect(len(jobs))
	for _, i := range order {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			errs[i] = jobs[i].read()
			prog.tick()
		}(i)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// logJobs returns the jobs that read logs into results (see readLog).
func (s *Store) logJobs(ctx context.Context, logs []fsbackend.FileInfo, results []logRead, want func(int) bool, upto []mapstore.Version) []readJob {
	jobs := make([]readJob, len(logs))
	for i, fi := range logs {
		jobs[i] = readJob{size: fi.Size, read: func() error {
			var err error
			if s.fs.Capabilities().DurableAppend && fi.Size >= 2*rangeBytes {
				if results[i], err = s.readLogRanged(ctx, fi.Name, want, upto); !errors.Is(err, errRanged) {
					if err != nil {
						return fmt.Errorf("stowage/mapstore/filestore: read %s: %w", fi.Name, err)
					}
					return nil
				}
			}
			if results[i], err = s.readLog(ctx, fi.Name, want, upto); err != nil {
				return fmt.Errorf("stowage/mapstore/filestore: read %s: %w", fi.Name, err)
			}
			return nil
		}}
	}
	return jobs
}

// readLogs reads log files in parallel, the largest first, keeping only
// partitions for which want returns true (all if want is nil). If upto is
// not nil, each segment also counts its log bytes above upto[p] (the
// version of partition p's newest snapshot).
func (s *Store) readLogs(ctx context.Context, logs []fsbackend.FileInfo, want func(int) bool, upto []mapstore.Version) ([]logRead, error) {
	results := make([]logRead, len(logs))
	if err := s.readAll(ctx, s.logJobs(ctx, logs, results, want, upto)); err != nil {
		return nil, err
	}
	return results, nil
}
