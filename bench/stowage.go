package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	_ "github.com/stowage/stowage/fsbackend/local" // LocalTarget
	"github.com/stowage/stowage/internal/latency"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/partition"
	"github.com/stowage/stowage/serde"
	"github.com/stowage/stowage/serde/record"
)

// Target is where a benchmark's map lives: storage properties (as in a
// map-store block) and a namespace.
type Target struct {
	Props     fsbackend.Properties
	Namespace string
	// Latency, if set, is the latency model the target's requests pass
	// through; Load reports what it counted during the EAGER load.
	Latency *latency.Model
}

// LocalTarget is a namespace on the local disk.
func LocalTarget(dir string) Target {
	return Target{Props: fsbackend.Properties{"storage.type": "hdfs", "fs.defaultFS": "file:///"}, Namespace: dir}
}

// mapFS opens the directory of one bench map on the target.
func (t Target) mapFS(ctx context.Context, name string) (fsbackend.FS, fsbackend.FS, error) {
	f, err := fsbackend.Open(ctx, t.Props)
	if err != nil {
		return nil, nil, err
	}
	sub, err := fsbackend.Sub(f, fsbackend.Join(strings.TrimPrefix(t.Namespace, "/"), "bench", name))
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, sub, nil
}

// Config returns a configuration whose bench* maps persist EAGERly under
// dir on the local disk, with extra map-store properties.
func Config(dir string, extra map[string]string) (*config.Config, error) {
	return TargetConfig(LocalTarget(dir), extra)
}

// TargetConfig is Config for any target.
func TargetConfig(t Target, extra map[string]string) (*config.Config, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "hazelcast:\n  cluster-name: bench\n  map:\n    bench*:\n      map-store:\n        enabled: true\n        initial-mode: EAGER\n        properties:\n")
	props := map[string]string{"type": "hdfs", "namespace": t.Namespace, "clusterName": "bench"}
	for k, v := range t.Props {
		props[k] = v
	}
	for k, v := range extra {
		props[k] = v
	}
	for k, v := range props {
		fmt.Fprintf(&b, "          %s: %q\n", k, v)
	}
	return config.Parse(nil, []byte(b.String()))
}

// WriteResult is one write-through measurement.
type WriteResult struct {
	PutsPerSec     float64
	RecordsPerSync float64 // average group-commit batch size
	// P50 and P90 are the median and 90th percentile of a put's latency.
	P50, P90 time.Duration
}

// WriteThrough measures Map.Put of writers goroutines, n puts each, with
// valueSize-byte values on a persisted map under dir.
func WriteThrough(ctx context.Context, t Target, writers, n, valueSize int) (WriteResult, error) {
	cfg, err := TargetConfig(t, nil)
	if err != nil {
		return WriteResult{}, err
	}
	node, err := stowage.Open(ctx, stowage.Options{Config: cfg})
	if err != nil {
		return WriteResult{}, err
	}
	defer node.Close()
	m, err := stowage.GetMap(ctx, node, "bench_write", serde.String(), serde.Bytes())
	if err != nil {
		return WriteResult{}, err
	}
	if err := node.WaitLoaded(ctx); err != nil {
		return WriteResult{}, err
	}
	value := make([]byte, valueSize)
	took := make([][]time.Duration, writers)
	start := time.Now()
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		took[w] = make([]time.Duration, 0, n)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < n; i++ {
				t0 := time.Now()
				if err := m.Put(ctx, string(appendKey(nil, w, i)), value); err != nil {
					errc <- err
					return
				}
				took[w] = append(took[w], time.Since(t0))
			}
		}(w)
	}
	wg.Wait()
	el := time.Since(start)
	close(errc)
	if err := <-errc; err != nil {
		return WriteResult{}, err
	}
	res := WriteResult{PutsPerSec: float64(writers*n) / el.Seconds()}
	res.RecordsPerSync = batchAverage(node)
	all := slices.Concat(took...)
	slices.Sort(all)
	if len(all) > 0 {
		res.P50, res.P90 = all[len(all)/2], all[len(all)*9/10]
	}
	return res, nil
}

func batchAverage(node *stowage.Node) float64 {
	batches, records := LogBatches(node)
	if batches == 0 {
		return 0
	}
	return records / float64(batches)
}

// LogBatches is how many group-commit batches node's map stores have
// written (each one fdatasync, or one sync of an open HDFS file) and the
// records they held, from its stowage_log_batch_records histogram.
func LogBatches(node *stowage.Node) (batches uint64, records float64) {
	g := node.Gatherer()
	if g == nil {
		return 0, 0
	}
	mfs, err := g.Gather()
	if err != nil {
		return 0, 0
	}
	for _, mf := range mfs {
		if mf.GetName() == "stowage_log_batch_records" && len(mf.Metric) > 0 {
			h := mf.Metric[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum()
		}
	}
	return 0, 0
}

// LoadResult compares an EAGER load with a raw read of the same files.
type LoadResult struct {
	Entries int
	Bytes   int64
	Load    time.Duration
	Raw     time.Duration
	// RawParallel is RawReadFSParallel of the same files, RawFilesAtOnce
	// files in flight at once (as many as the store reads at once on
	// HDFS and object stores).
	RawParallel    time.Duration
	EntriesPerSec  float64
	BytesPerSec    float64
	RawBytesPerSec float64
	// With Target.Latency: the listings and reads the EAGER load sent,
	// and the most reads in flight at once.
	Lists, Reads, MaxReads int64
}

// Load writes entries entries of valueSize bytes into a map's files (with
// large StoreAll batches, through the file map store), then times a raw
// sequential read + CRC of the files and a node's EAGER load of them.
// Both read from the page cache, so the ratio is about CPU work per byte.
//
// batch is the records per StoreAll call the files are written with
// (DefaultLoadBatch if 0): on HDFS and object stores each is one file, so
// a small batch makes many small files, as write-through with few writers
// does.
func Load(ctx context.Context, t Target, entries, valueSize, batch int) (LoadResult, error) {
	if err := writeLoadFiles(ctx, t, entries, valueSize, batch); err != nil {
		return LoadResult{}, err
	}
	root, f, err := t.mapFS(ctx, loadMap)
	if err != nil {
		return LoadResult{}, err
	}
	defer root.Close()
	res := LoadResult{Entries: entries}
	res.Bytes, res.Raw, err = RawReadFS(ctx, f)
	if err != nil {
		return res, err
	}
	if _, res.RawParallel, err = RawReadFSParallel(ctx, f, RawFilesAtOnce); err != nil {
		return res, err
	}
	if t.Latency != nil {
		t.Latency.Reset()
	}
	res.Load, err = EagerLoad(ctx, t, entries)
	if err != nil {
		return res, err
	}
	if t.Latency != nil {
		l, r := t.Latency.KindStats(latency.List), t.Latency.KindStats(latency.Get)
		res.Lists, res.Reads, res.MaxReads = l.Served, r.Served, r.MaxInFlight
	}
	res.EntriesPerSec = float64(entries) / res.Load.Seconds()
	res.BytesPerSec = float64(res.Bytes) / res.Load.Seconds()
	res.RawBytesPerSec = float64(res.Bytes) / res.Raw.Seconds()
	return res, nil
}

// loadMap is the map Load writes and loads.
const loadMap = "bench_load"

// WriteLoadFiles writes entries entries of valueSize bytes into the files
// of the map Load measures, through the file map store in large StoreAll
// batches.
func WriteLoadFiles(ctx context.Context, t Target, entries, valueSize int) error {
	return writeLoadFiles(ctx, t, entries, valueSize, DefaultLoadBatch)
}

// DefaultLoadBatch is the records per StoreAll call of WriteLoadFiles.
const DefaultLoadBatch = 4096

func writeLoadFiles(ctx context.Context, t Target, entries, valueSize, batch int) error {
	if batch <= 0 {
		batch = DefaultLoadBatch
	}
	root, f, err := t.mapFS(ctx, loadMap)
	if err != nil {
		return err
	}
	defer root.Close()
	st, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: partition.DefaultCount})
	if err != nil {
		return err
	}
	value := make([]byte, valueSize)
	seqs := make([]uint64, partition.DefaultCount)
	recs := make([]mapstore.Record, 0, batch)
	for i := 0; i < entries; i++ {
		k := appendKey(nil, i%64, i)
		p := partition.Of(k, partition.DefaultCount)
		seqs[p]++
		recs = append(recs, mapstore.Record{Partition: p, Version: mapstore.Version{Epoch: 1, Seq: seqs[p]}, Key: k, Value: value})
		if len(recs) == batch || i == entries-1 {
			if err := st.StoreAll(ctx, recs); err != nil {
				st.Close()
				return err
			}
			recs = recs[:0]
		}
	}
	return st.Close()
}

// EagerLoad times a node's start until its EAGER map of the files
// WriteLoadFiles wrote is loaded, and checks that it holds entries
// entries.
func EagerLoad(ctx context.Context, t Target, entries int) (time.Duration, error) {
	took, _, err := EagerLoadPhases(ctx, t, entries)
	return took, err
}

// EagerLoadPhases is EagerLoad that also returns how much of the load
// was the opening of the node: its map store's read of every log file
// (read, checked, sorted by partition). The rest is the partitions'
// maps being built from what was read and the partitions made active.
func EagerLoadPhases(ctx context.Context, t Target, entries int) (took, opened time.Duration, err error) {
	cfg, err := TargetConfig(t, nil)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	node, err := stowage.Open(ctx, stowage.Options{Config: cfg})
	if err != nil {
		return 0, 0, err
	}
	defer node.Close()
	opened = time.Since(start)
	if err := node.WaitLoaded(ctx); err != nil {
		return 0, opened, err
	}
	took = time.Since(start)
	m, err := stowage.GetMap(ctx, node, loadMap, serde.String(), serde.Bytes())
	if err != nil {
		return took, opened, err
	}
	if n, err := m.Size(ctx); err != nil || n != entries {
		return took, opened, fmt.Errorf("bench: loaded %d entries, want %d (%v)", n, entries, err)
	}
	return took, opened, nil
}

// DiskResult is the space a map takes after overwrites.
type DiskResult struct {
	Keys, Rounds int
	LiveBytes    int64
	// PeakBytes is the most seen on disk while the keys were written
	// (sampled every few milliseconds).
	PeakBytes int64
	// DiskBytes is what is on disk once the map was idle for Idle, before
	// it is closed; Ratio is DiskBytes per live byte.
	DiskBytes int64
	Idle      time.Duration
	Ratio     float64
	// InBound and InTwice are how long after the last write the disk was
	// first within max(2x live, live + 4 MiB) and within twice the live
	// bytes (sampled every 50 ms; 0: not within Idle).
	InBound, InTwice time.Duration
}

// overwriteIdle is how long Overwrite leaves the map idle before it
// measures the disk.
const overwriteIdle = 5 * time.Second

// Overwrite writes keys keys, rounds times each, from writers goroutines,
// at the default map-store settings, sampling the disk meanwhile; then it
// leaves the map idle for a few seconds and compares the bytes on disk
// with the live bytes.
func Overwrite(ctx context.Context, dir string, keys, rounds, writers, valueSize int) (DiskResult, error) {
	cfg, err := Config(dir, nil)
	if err != nil {
		return DiskResult{}, err
	}
	node, err := stowage.Open(ctx, stowage.Options{Config: cfg})
	if err != nil {
		return DiskResult{}, err
	}
	m, err := stowage.GetMap(ctx, node, "bench_overwrite", serde.String(), serde.Bytes())
	if err != nil {
		node.Close()
		return DiskResult{}, err
	}
	mapDir := filepath.Join(dir, "bench", "bench_overwrite")
	res := DiskResult{Keys: keys, Rounds: rounds, Idle: overwriteIdle}
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if n, err := dirBytes(mapDir); err == nil {
				res.PeakBytes = max(res.PeakBytes, n)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	value := make([]byte, valueSize)
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				for k := w; k < keys; k += writers {
					if err := m.Put(ctx, string(appendKey(nil, 0, k)), value); err != nil {
						errc <- err
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	<-sampled
	close(errc)
	if err := <-errc; err != nil {
		node.Close()
		return DiskResult{}, err
	}
	for k := 0; k < keys; k++ {
		res.LiveBytes += int64(len(appendKey(nil, 0, k)) + valueSize)
	}
	idle := time.Now()
	for time.Since(idle) < overwriteIdle {
		if n, err := dirBytes(mapDir); err == nil {
			if res.InBound == 0 && n <= max(2*res.LiveBytes, res.LiveBytes+4<<20) {
				res.InBound = max(time.Since(idle), time.Nanosecond)
			}
			if res.InTwice == 0 && n <= 2*res.LiveBytes {
				res.InTwice = max(time.Since(idle), time.Nanosecond)
			}
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			node.Close()
			return DiskResult{}, ctx.Err()
		}
	}
	res.DiskBytes, err = dirBytes(mapDir)
	res.Ratio = float64(res.DiskBytes) / float64(res.LiveBytes)
	if cerr := node.Close(); err == nil {
		err = cerr
	}
	return res, err
}

func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}

// RawFilesAtOnce is the files RawReadFSParallel reads at once in Load:
// what the file map store reads at once on HDFS and object stores.
const RawFilesAtOnce = 16

// RawReadFSParallel is RawReadFS with up to n files read at once.
func RawReadFSParallel(ctx context.Context, f fsbackend.FS, n int) (int64, time.Duration, error) {
	start := time.Now()
	list, err := f.List(ctx, "")
	if err != nil {
		return 0, 0, err
	}
	var total atomic.Int64
	g := make(chan struct{}, max(1, n))
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i, fi := range list {
		g <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-g; wg.Done() }()
			b, err := fsbackend.ReadFile(ctx, f, fi.Name)
			if err != nil {
				errs[i] = err
				return
			}
			total.Add(int64(len(b)))
			_ = record.Checksum(b)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, 0, err
	}
	return total.Load(), time.Since(start), nil
}

// RawReadFS reads every file of f sequentially and computes its CRC-32C:
// the floor of any load from that storage.
func RawReadFS(ctx context.Context, f fsbackend.FS) (int64, time.Duration, error) {
	start := time.Now()
	list, err := f.List(ctx, "")
	if err != nil {
		return 0, 0, err
	}
	var total int64
	for _, fi := range list {
		b, err := fsbackend.ReadFile(ctx, f, fi.Name)
		if err != nil {
			return 0, 0, err
		}
		total += int64(len(b))
		_ = record.Checksum(b)
	}
	return total, time.Since(start), nil
}
