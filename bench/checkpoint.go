package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

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
	Raw         time.Duration // median fsbackend.WriteFileAtomic of the same bytes

	Checkpoints int           // checkpoints of the pipeline searched for its latest
	Latest      time.Duration // median GetLatestCheckpointByJobAndPipeline
	List        time.Duration // median listing of the job's directory: the floor
	FilesOpened float64       // files opened per latest lookup
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
	res.MaxRetained = s.MaxRetained()
	var took []time.Duration
	for i := range stores {
		start := time.Now()
		_, err := s.StoreCheckpoint(ctx, checkpoint.PipelineState{JobID: "bench", PipelineID: 1, CheckpointID: int64(i + 1), States: state})
		if err != nil {
			s.Close()
			return res, err
		}
		took = append(took, time.Since(start))
	}
	if err := s.Close(); err != nil {
		return res, err
	}
	res.Store, res.StoreP90 = quantile(took, 0.5), quantile(took, 0.9)
	took = took[:0]
	for i := range stores {
		name := fmt.Sprintf("raw/%d", i)
		start := time.Now()
		if err := fsbackend.WriteFileAtomic(ctx, fsys, name, "tmp", state); err != nil {
			return res, err
		}
		took = append(took, time.Since(start))
		if i >= res.MaxRetained {
			_ = fsys.Remove(ctx, fmt.Sprintf("raw/%d", i-res.MaxRetained))
		}
	}
	res.Raw = quantile(took, 0.5)

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
	opened := counted.Calls(errorfs.OpOpen)
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
		start = time.Now()
		if _, err := base.List(ctx, "latest/bench"); err != nil {
			return res, err
		}
		list = append(list, time.Since(start))
	}
	res.FilesOpened = float64(counted.Calls(errorfs.OpOpen)-opened) / rounds
	res.Latest, res.List = quantile(latest, 0.5), quantile(list, 0.5)
	return res, nil
}

// writeCheckpoints lays out n small checkpoints of job "bench" pipeline 1
// under dir/latest: stored through the storage on a memory FS, then copied
// to disk without a sync each, which keeps the setup short.
func writeCheckpoints(ctx context.Context, dir string, n int) error {
	mem := memfs.New()
	defer mem.Close()
	s, err := checkpoint.Open(ctx, checkpoint.Options{FS: mem, Namespace: "/latest/", MaxRetained: checkpoint.KeepAll})
	if err != nil {
		return err
	}
	state := make([]byte, 4096)
	for id := 1; id <= n; id++ {
		if _, err := s.StoreCheckpoint(ctx, checkpoint.PipelineState{JobID: "bench", PipelineID: 1, CheckpointID: int64(id), States: state}); err != nil {
			s.Close()
			return err
		}
	}
	if err := s.Close(); err != nil {
		return err
	}
	fis, err := mem.List(ctx, "latest/bench")
	if err != nil {
		return err
	}
	out := filepath.Join(dir, "latest", "bench")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, fi := range fis {
		data, err := fsbackend.ReadFile(ctx, mem, fi.Name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(filepath.FromSlash(fi.Name))), data, 0o644); err != nil {
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
