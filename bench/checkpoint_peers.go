package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/fsbackend"
)

// PeerWorkload is one measurement of the checkpoint workloads that
// `stowage bench --peers` runs on stowage and on SeaTunnel's
// checkpoint-storage-hdfs plugin alike. The JSON names are those the
// plugin's harness (bench/peers) prints.
type PeerWorkload struct {
	System      string  `json:"system"`
	Workload    string  `json:"workload"` // store, latest, delete, or delete-files (stowage: until the files are gone)
	StateBytes  int     `json:"state_bytes,omitempty"`
	Checkpoints int     `json:"checkpoints,omitempty"` // of the job looked up or deleted
	Count       int     `json:"count"`
	PerSec      float64 `json:"per_sec,omitempty"` // stores per second
	MedianNS    int64   `json:"median_ns"`
	P90NS       int64   `json:"p90_ns,omitempty"`
}

// PeerOptions are the sizes of the peer checkpoint workloads.
type PeerOptions struct {
	Sizes       []int // state bytes of the store workloads
	Stores      int   // checkpoints stored per size
	Checkpoints int   // checkpoints of the job for the latest lookup and the delete
	Lookups     int   // latest lookups measured
}

// PeerCheckpoints runs the peer checkpoint workloads on stowage's
// checkpoint storage in namespace ns of fsys, every checkpoint kept (the
// plugin keeps every checkpoint too; the engine deletes old ones itself):
// for each size, Stores checkpoints of one pipeline stored one after the
// other; the latest checkpoint of a job of Checkpoints checkpoints of
// 4 KiB, Lookups times; and the deletion of that job. round keeps the job
// ids of rounds apart.
func PeerCheckpoints(ctx context.Context, fsys fsbackend.FS, ns string, round int, o PeerOptions) ([]PeerWorkload, error) {
	s, err := checkpoint.Open(ctx, checkpoint.Options{FS: fsys, Namespace: ns, MaxRetained: checkpoint.KeepAll})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var out []PeerWorkload
	for _, size := range o.Sizes {
		state := make([]byte, size)
		for i := range state {
			state[i] = byte(i * 7)
		}
		job := fmt.Sprintf("store-%d-%d", size, round)
		took := make([]time.Duration, 0, o.Stores)
		start := time.Now()
		for i := range o.Stores {
			t := time.Now()
			if _, err := s.StoreCheckpoint(ctx, checkpoint.PipelineState{JobID: job, PipelineID: 1, CheckpointID: int64(i + 1), States: state}); err != nil {
				return nil, err
			}
			took = append(took, time.Since(t))
		}
		total := time.Since(start)
		out = append(out, PeerWorkload{System: "stowage", Workload: "store", StateBytes: size, Count: o.Stores,
			PerSec: float64(o.Stores) / total.Seconds(), MedianNS: int64(quantile(took, 0.5)), P90NS: int64(quantile(took, 0.9))})
		if err := s.DeleteCheckpoint(ctx, job); err != nil {
			return nil, err
		}
		// The local disk unlinks the job's files in the background: let
		// it finish before the next workload, as the plugin's delete does.
		if err := s.WaitBackground(ctx); err != nil {
			return nil, err
		}
	}

	job := fmt.Sprintf("latest-%d", round)
	state := make([]byte, 4096)
	for id := 1; id <= o.Checkpoints; id++ {
		if _, err := s.StoreCheckpoint(ctx, checkpoint.PipelineState{JobID: job, PipelineID: 1, CheckpointID: int64(id), States: state}); err != nil {
			return nil, err
		}
	}
	took := make([]time.Duration, 0, o.Lookups)
	for range o.Lookups {
		t := time.Now()
		st, err := s.GetLatestCheckpointByJobAndPipeline(ctx, job, 1)
		if err != nil {
			return nil, err
		}
		took = append(took, time.Since(t))
		if st.CheckpointID != int64(o.Checkpoints) {
			return nil, fmt.Errorf("latest of %d checkpoints: got checkpoint %d", o.Checkpoints, st.CheckpointID)
		}
	}
	out = append(out, PeerWorkload{System: "stowage", Workload: "latest", Checkpoints: o.Checkpoints, Count: o.Lookups,
		MedianNS: int64(quantile(took, 0.5)), P90NS: int64(quantile(took, 0.9))})

	t := time.Now()
	if err := s.DeleteCheckpoint(ctx, job); err != nil {
		return nil, err
	}
	del := time.Since(t)
	// On the local disk the job's files are unlinked in the background
	// after the call: wait for them, so that the disk is idle again before
	// the next workload, and report that time too (on HDFS the call's: the
	// files are gone when it returns). The checks come after, outside both
	// times.
	if err := s.WaitBackground(ctx); err != nil {
		return nil, err
	}
	gone := time.Since(t)
	if all, err := s.GetAllCheckpoints(ctx, job); err != nil || len(all) != 0 {
		return nil, fmt.Errorf("job %s after its deletion: %d checkpoints left (%v)", job, len(all), err)
	}
	if left, err := fsys.List(ctx, fsbackend.Join(strings.Trim(ns, "/"), job)); err != nil || len(left) != 0 {
		return nil, fmt.Errorf("job %s after its deletion: %d files left (%v)", job, len(left), err)
	}
	out = append(out, PeerWorkload{System: "stowage", Workload: "delete", Checkpoints: o.Checkpoints, Count: 1, MedianNS: int64(del)},
		PeerWorkload{System: "stowage", Workload: "delete-files", Checkpoints: o.Checkpoints, Count: 1, MedianNS: int64(gone)})
	return out, nil
}
