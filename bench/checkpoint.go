package bench

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/fsbackend/memfs"
)

// CheckpointResult holds the checkpoint storage measurements.
type CheckpointResult struct {
	StateSize   int           // bytes of each stored state
	Stores      int           // checkpoints stored
	MaxRetained int           // retention while storing
	Store       time.Duration // median StoreCheckpoint latency
	StoreP90    time.Duration
	// StoreAll is the median with every checkpoint kept (no retention).
	StoreAll time.Duration
	Raw      time.Duration // median fsbackend.WriteFileAtomic of the same bytes
	// RawFloor is the median of the least a durable atomic write can do:
	// write to a new file, fdatasync, rename, fsync the directory (os
	// calls, no fsbackend). RawFloorRetire is the same with the file
	// MaxRetained writes back removed before the directory sync, which is
	// what a store past the retention limit has to do as well.
	RawFloor, RawFloorRetire time.Duration

	Checkpoints int           // checkpoints of the pipeline searched for its latest
	Latest      time.Duration // median GetLatestCheckpointByJobAndPipeline
	List        time.Duration // median listing of the job's directory
	FilesOpened float64       // files opened per latest lookup
	// Lists and Stats are the List and Stat calls per latest lookup.
	Lists, Stats float64
}

// Checkpoints measures, on the local disk under dir, the latency of storing
// stores checkpoints of stateSize bytes (default retention, so each store
// past it also deletes one) against writing the same bytes atomically, and
// the time to find the latest of n checkpoints of one pipeline, with the
// number of files that lookup opens.
func Checkpoints(ctx context.Context, dir string, stateSize, stores, n int) (CheckpointResult, error) {
	res := CheckpointResult{StateSize: stateSize, Stores: stores, Checkpoints: n}
	fsys, err := local.New(dir)
	if err != nil {
		return res, err
	}
	defer fsys.Close()
	state := make([]byte, stateSize)
	for i := range state {
		state[i] = byte(i * 7)
	}

	s, err := checkpoint.Open(ctx, checkpoint.Options{FS: fsys, Namespace: "/store/"})
	if err != nil {
		return res, err
	}
	defer s.Close()
	all, err := checkpoint.Open(ctx, checkpoint.Options{FS: fsys, Namespace: "/store-all/", MaxRetained: checkpoint.KeepAll})
	if err != nil {
		return res, err
	}
	defer all.Close()
	res.MaxRetained = s.MaxRetained()
	floor, retiring := filepath.Join(dir, "floor"), filepath.Join(dir, "floor-retiring")
	for _, d := range []string{floor, retiring} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return res, err
		}
	}
	// One of each per round, so that load from elsewhere on the machine
	// falls on all three alike.
	var took, tookAll, raw, floorTook, retireTook []time.Duration
	for i := range stores {
		st := checkpoint.PipelineState{JobID: "bench", PipelineID: 1, CheckpointID: int64(i + 1), States: state}
		start := time.Now()
		if _, err := s.StoreCheckpoint(ctx, st); err != nil {
			return res, err
		}
		took = append(took, time.Since(start))
		start = time.Now()
		if _, err := all.StoreCheckpoint(ctx, st); err != nil {
			return res, err
		}
		tookAll = append(tookAll, time.Since(start))

		name := fmt.Sprintf("raw/%d", i)
		start = time.Now()
		if err := fsbackend.WriteFileAtomic(ctx, fsys, name, "tmp", state); err != nil {
			return res, err
		}
		raw = append(raw, time.Since(start))
		if i >= res.MaxRetained {
			_ = fsys.Remove(ctx, fmt.Sprintf("raw/%d", i-res.MaxRetained))
		}

		d, err := rawFloor(floor, fmt.Sprint(i), state, "")
		if err != nil {
			return res, err
		}
		floorTook = append(floorTook, d)
		if i >= res.MaxRetained {
			_ = os.Remove(filepath.Join(floor, fmt.Sprint(i-res.MaxRetained)))
			d, err := rawFloor(retiring, fmt.Sprint(i), state, fmt.Sprint(i-res.MaxRetained))
			if err != nil {
				return res, err
			}
			retireTook = append(retireTook, d)
		} else if _, err := rawFloor(retiring, fmt.Sprint(i), state, ""); err != nil {
			return res, err
		}
	}
	res.Store, res.StoreP90, res.StoreAll = quantile(took, 0.5), quantile(took, 0.9), quantile(tookAll, 0.5)
	res.Raw, res.RawFloor, res.RawFloorRetire = quantile(raw, 0.5), quantile(floorTook, 0.5), quantile(retireTook, 0.5)

	if err := writeCheckpoints(ctx, filepath.Join(dir, "latest"), n); err != nil {
		return res, err
	}
	base, err := local.New(filepath.Join(dir, "latest"))
	if err != nil {
		return res, err
	}
	defer base.Close()
	counted := errorfs.Wrap(base, nil)
	ls, err := checkpoint.Open(ctx, checkpoint.Options{FS: counted, Namespace: "/latest/", MaxRetained: checkpoint.KeepAll})
	if err != nil {
		return res, err
	}
	defer ls.Close()
	const rounds = 7
	var latest, list []time.Duration
	opened, lists, stats := counted.Calls(errorfs.OpOpen), counted.Calls(errorfs.OpList), counted.Calls(errorfs.OpStat)
	for range rounds {
		start := time.Now()
		st, err := ls.GetLatestCheckpointByJobAndPipeline(ctx, "bench", 1)
		if err != nil {
			return res, err
		}
		if st.CheckpointID != int64(n) {
			return res, fmt.Errorf("latest of %d checkpoints: got checkpoint %d", n, st.CheckpointID)
		}
		latest = append(latest, time.Since(start))
		list = append(list, time.Since(start))
	}
	res.FilesOpened = float64(counted.Calls(errorfs.OpOpen)-opened) / rounds
	res.Lists = float64(counted.Calls(errorfs.OpList)-lists) / rounds
	res.Stats = float64(counted.Calls(errorfs.OpStat)-stats) / rounds
	for range rounds {
		start := time.Now()
		if _, err := base.List(ctx, "latest/bench"); err != nil {
			return res, err
		}
		list = append(list, time.Since(start))
	}
	res.Latest, res.List = quantile(latest, 0.5), quantile(list, 0.5)
	return res, nil
}

// writeCheckpoints lays out n small checkpoints of job "bench" pipeline 1
// under dir/latest: stored through the storage on a memory FS, then copied
// to disk without a sync each, which keeps the setup short.
func writeCheckpoints(ctx context.Context, dir string, n int) error {
	return writeJob(ctx, dir, "latest", "bench", n)
}

// writeJob stores n checkpoints of 4 KiB of job pipeline 1 in namespace
// /ns/ of a memory FS and copies every file the storage wrote to dir
// (dir/ns/job/...) without a sync each; the caller syncs if it needs to.
func writeJob(ctx context.Context, dir, ns, job string, n int) error {
	mem := memfs.New()
	defer mem.Close()
	s, err := checkpoint.Open(ctx, checkpoint.Options{FS: mem, Namespace: "/" + ns + "/", MaxRetained: checkpoint.KeepAll})
	if err != nil {
		return err
	}
	state := make([]byte, 4096)
	for id := 1; id <= n; id++ {
		if _, err := s.StoreCheckpoint(ctx, checkpoint.PipelineState{JobID: job, PipelineID: 1, CheckpointID: int64(id), States: state}); err != nil {
			s.Close()
			return err
		}
	}
	if err := s.Close(); err != nil {
		return err
	}
	fis, err := mem.List(ctx, ns+"/"+job)
	if err != nil {
		return err
	}
	for _, fi := range fis {
		data, err := fsbackend.ReadFile(ctx, mem, fi.Name)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(fi.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// quantile returns the q-quantile of ds (which it sorts).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

// rawFloor writes state durably and atomically to dir/name the least way
// there is: a new file written, fdatasync'd and closed, renamed, and the
// directory fsync'd once; when retire is not "", that file (an older one)
// is also removed, before the directory sync, as retention does. It
// returns how long that took.
func rawFloor(dir, name string, state []byte, retire string) (time.Duration, error) {
	final := filepath.Join(dir, name)
	start := time.Now()
	f, err := os.OpenFile(final+".tmp", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	if _, err := f.Write(state); err != nil {
		f.Close()
		return 0, err
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(final+".tmp", final); err != nil {
		return 0, err
	}
	if retire != "" {
		if err := os.Remove(filepath.Join(dir, retire)); err != nil {
			return 0, err
		}
	}
	if err := fsyncDir(dir); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

func fsyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// DeleteResult holds the measurement of deleting a job.
type DeleteResult struct {
	Checkpoints int           // checkpoints of the job deleted
	Rounds      int           // jobs deleted
	Delete      time.Duration // median DeleteCheckpoint of the job
	// Gone is the median time from the call until the job's files are
	// gone (the local disk unlinks them in the background).
	Gone time.Duration
	// Raw is the median of removing the same files with os.Remove and
	// fsyncing their directories once: the speed of the disk.
	Raw time.Duration
}

// CheckpointDelete measures, on the local disk under dir, deleting a job of
// n checkpoints of 4 KiB (laid out as the storage writes them, then
// flushed to disk with sync(2)) with DeleteCheckpoint, against removing
// the same files directly.
func CheckpointDelete(ctx context.Context, dir string, n, rounds int) (DeleteResult, error) {
	res := DeleteResult{Checkpoints: n, Rounds: rounds}
	fsys, err := local.New(dir)
	if err != nil {
		return res, err
	}
	defer fsys.Close()
	s, err := checkpoint.Open(ctx, checkpoint.Options{FS: fsys, Namespace: "/del/", MaxRetained: checkpoint.KeepAll})
	if err != nil {
		return res, err
	}
	defer s.Close()
	var took, gone, raw []time.Duration
	for r := range rounds {
		job := fmt.Sprintf("job-%d", r)
		if err := writeJob(ctx, dir, "del", job, n); err != nil {
			return res, err
		}
		unix.Sync()
		start := time.Now()
		if err := s.DeleteCheckpoint(ctx, job); err != nil {
			return res, err
		}
		took = append(took, time.Since(start))
		if err := s.WaitBackground(ctx); err != nil {
			return res, err
		}
		gone = append(gone, time.Since(start))
		if left, err := fsys.List(ctx, "del/"+job); err != nil || len(left) != 0 {
			return res, fmt.Errorf("after deleting job %s: %d files left (%v)", job, len(left), err)
		}

		// The reference: the same files, removed and synced directly.
		if err := writeJob(ctx, dir, "raw", job, n); err != nil {
			return res, err
		}
		unix.Sync()
		root := filepath.Join(dir, "raw", job)
		start = time.Now()
		dirs := map[string]bool{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			dirs[filepath.Dir(p)] = true
			return os.Remove(p)
		})
		if err != nil {
			return res, err
		}
		for d := range dirs {
			if err := fsyncDir(d); err != nil {
				return res, err
			}
		}
		raw = append(raw, time.Since(start))
		if err := os.RemoveAll(root); err != nil {
			return res, err
		}
	}
	res.Delete, res.Gone, res.Raw = quantile(took, 0.5), quantile(gone, 0.5), quantile(raw, 0.5)
	return res, nil
}
