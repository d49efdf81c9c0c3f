package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/fsbackend/memfs"
)

func noFaults() errorfs.Injector {
	return errorfs.InjectorFunc(func(errorfs.Call) error { return nil })
}

// BenchmarkStore1MiB stores 1 MiB checkpoints with max-retained 3 (so each
// store also lists, reads back and deletes one), against the reference of
// writing the same bytes with fsbackend.WriteFileAtomic on the same FS.
func BenchmarkStore1MiB(b *testing.B) {
	state := make([]byte, 1<<20)
	for i := range state {
		state[i] = byte(i)
	}
	backends := []struct {
		name string
		fs   func(b *testing.B) fsbackend.FS
	}{
		{"local", func(b *testing.B) fsbackend.FS { return newLocal(b) }},
		{"memfs", func(b *testing.B) fsbackend.FS { return memfs.New() }},
	}
	for _, be := range backends {
		b.Run(be.name+"/checkpoint", func(b *testing.B) {
			s := checkpointtest.Open(b, be.fs(b), checkpoint.Options{MaxRetained: 3})
			b.SetBytes(int64(len(state)))
			b.ResetTimer()
			for i := range b.N {
				if _, err := s.StoreCheckpoint(context.Background(), checkpoint.PipelineState{JobID: "bench", PipelineID: 1, CheckpointID: int64(i), States: state}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(be.name+"/raw-write-atomic", func(b *testing.B) {
			fsys := be.fs(b)
			b.SetBytes(int64(len(state)))
			b.ResetTimer()
			for i := range b.N {
				if err := fsbackend.WriteFileAtomic(context.Background(), fsys, fmt.Sprintf("raw/%d", i), "t", state); err != nil {
					b.Fatal(err)
				}
				if i >= 3 {
					_ = fsys.Remove(context.Background(), fmt.Sprintf("raw/%d", i-3))
				}
			}
		})
	}
}

// BenchmarkLatestOf10000 finds the latest of 10,000 checkpoints of one
// pipeline. files-opened/op shows that only the chosen file is read.
func BenchmarkLatestOf10000(b *testing.B) {
	const n = 10_000
	mem := memfs.New()
	{
		s, err := checkpoint.Open(context.Background(), checkpoint.Options{FS: mem, Namespace: checkpointtest.Namespace, MaxRetained: checkpoint.KeepAll})
		if err != nil {
			b.Fatal(err)
		}
		for id := int64(1); id <= n; id++ {
			st := checkpointtest.State("bench", 1, id)
			st.States = make([]byte, 4096)
			mustStore(b, s, st)
		}
		s.Close()
	}
	run := func(b *testing.B, base fsbackend.FS) {
		efs := errorfs.Wrap(base, noFaults())
		s := checkpointtest.Open(b, efs, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
		b.ResetTimer()
		for range b.N {
			st, err := s.GetLatestCheckpointByJobAndPipeline(context.Background(), "bench", 1)
			if err != nil || st.CheckpointID != n {
				b.Fatalf("latest = %d, %v", st.CheckpointID, err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(efs.Calls(errorfs.OpOpen))/float64(b.N), "files-opened/op")
	}
	b.Run("memfs", func(b *testing.B) { run(b, mem) })
	b.Run("local", func(b *testing.B) {
		// Copy the files to disk without a sync each, to keep setup short.
		dir := b.TempDir()
		fis, err := mem.List(context.Background(), "")
		if err != nil {
			b.Fatal(err)
		}
		for _, fi := range fis {
			data, err := fsbackend.ReadFile(context.Background(), mem, fi.Name)
			if err != nil {
				b.Fatal(err)
			}
			p := filepath.Join(dir, filepath.FromSlash(fi.Name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		run(b, newLocalAt(b, dir))
	})
}

// BenchmarkStoreVsFloor interleaves, on the local disk, a store of a 1 MiB
// checkpoint with max-retained 20 and the least a durable atomic write of
// the same bytes does with os calls (the floor: write a new file,
// fdatasync, rename, fsync the directory), one of each per iteration so
// that load from elsewhere falls on both alike. It reports the median of
// each and floor/store (at least 0.8 is the aim).
func BenchmarkStoreVsFloor(b *testing.B) {
	state := make([]byte, 1<<20)
	for i := range state {
		state[i] = byte(i * 7)
	}
	dir := b.TempDir()
	s := checkpointtest.Open(b, newLocalAt(b, filepath.Join(dir, "s")), checkpoint.Options{MaxRetained: 20})
	floorDir := filepath.Join(dir, "floor")
	if err := os.MkdirAll(floorDir, 0o755); err != nil {
		b.Fatal(err)
	}
	floor := func(i int) {
		name := filepath.Join(floorDir, fmt.Sprintf("c%06d", i))
		f, err := os.OpenFile(name+".tmp", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(state); err != nil {
			b.Fatal(err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(name+".tmp", name); err != nil {
			b.Fatal(err)
		}
		d, err := os.Open(floorDir)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Sync(); err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
	var stores, floors []time.Duration
	b.SetBytes(int64(len(state)))
	b.ResetTimer()
	for i := range b.N {
		t := time.Now()
		if _, err := s.StoreCheckpoint(context.Background(), checkpoint.PipelineState{JobID: "bench", PipelineID: 1, CheckpointID: int64(i), States: state}); err != nil {
			b.Fatal(err)
		}
		stores = append(stores, time.Since(t))
		b.StopTimer()
		t = time.Now()
		floor(i)
		floors = append(floors, time.Since(t))
		if i >= 20 { // the floor keeps as many files as the storage
			_ = os.Remove(filepath.Join(floorDir, fmt.Sprintf("c%06d", i-20)))
		}
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(stores)
	slices.Sort(floors)
	st, fl := stores[len(stores)/2], floors[len(floors)/2]
	b.ReportMetric(float64(st.Microseconds())/1000, "store-ms")
	b.ReportMetric(float64(fl.Microseconds())/1000, "floor-ms")
	b.ReportMetric(float64(fl)/float64(st), "floor/store")
}
