package filestore_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/serde/keyhash"
)

// BenchmarkOverwrite is the write path of one member as the map drives
// it: Admit, then Store, from 64 goroutines on local disk, overwriting
// 4096 keys with 256 B values, with compaction from an in-memory model
// running alongside. It reports puts/s and disk bytes per live byte.
func BenchmarkOverwrite(b *testing.B) {
	for _, writers := range []int{64, 1} {
		b.Run(fmt.Sprint("writers=", writers), func(b *testing.B) {
			f, err := local.New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: keyhash.DefaultPartitions, SegmentSize: 4 << 20})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			m := newBenchModel(keyhash.DefaultPartitions)
			s.SetSnapshotSource(m.source)
			for p := 0; p < keyhash.DefaultPartitions; p++ {
				if err := s.ReplayPartition(ctx, p, func(mapstore.Record) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			value := make([]byte, 256)
			procs := runtime.GOMAXPROCS(0)
			b.SetParallelism(max(1, (writers+procs-1)/procs))
			var next atomic.Int64
			put := func() error {
				if err := s.Admit(ctx); err != nil {
					return err
				}
				i := next.Add(1)
				key := []byte("job-" + strconv.FormatInt(i%4096, 10))
				return s.Store(ctx, m.put(key, value))
			}
			b.ResetTimer()
			start := time.Now()
			if writers == 1 {
				for i := 0; i < b.N; i++ {
					if err := put(); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := put(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "puts/s")
			b.StopTimer()
			if disk, live := diskBytes(b, f), m.liveBytes(); live > 0 {
				b.ReportMetric(float64(disk)/float64(live), "disk/live")
			}
		})
	}
}

// loadEntries is the map size BenchmarkLoad loads.
const loadEntries = 500_000

// BenchmarkLoad is the EAGER load of one member: Open scans the log
// files of loadEntries entries (256 B values, written once with large
// batches), then every partition is loaded into a map of its own,
// GOMAXPROCS partitions at a time: with ReplayPartition and the version
// check per key of the root package's loadFromStore (replay=records), or
// with ReplayPartitionKeys, applying each record in turn (replay=keys).
// The log holds each partition's records in version order (log=ordered),
// or, as concurrent writers leave it, somewhat out of order
// (log=unordered). It reports entries/s.
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	for _, ordered := range []bool{true, false} {
		f, err := local.New(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		writeLoadEntries(b, f, loadEntries, ordered)
		for _, keys := range []bool{false, true} {
			name := "log=ordered"
			if !ordered {
				name = "log=unordered"
			}
			if keys {
				name += "/replay=keys"
			} else {
				name += "/replay=records"
			}
			b.Run(name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: keyhash.DefaultPartitions})
					if err != nil {
						b.Fatal(err)
					}
					n := loadLikeTheMap(b, s, keys)
					b.StopTimer()
					if n != loadEntries {
						b.Fatalf("loaded %d entries, want %d", n, loadEntries)
					}
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(loadEntries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
			})
		}
	}
}

// writeLoadEntries writes n entries with 256 B values through a store in
// batches of 4096, as the bench package does. Unless ordered, each
// batch gives each partition's records its versions in reverse.
func writeLoadEntries(tb testing.TB, f *local.FS, n int, ordered bool) {
	tb.Helper()
	ctx := context.Background()
	s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: keyhash.DefaultPartitions})
	if err != nil {
		tb.Fatal(err)
	}
	value := make([]byte, 256)
	seqs := make([]uint64, keyhash.DefaultPartitions)
	recs := make([]mapstore.Record, 0, 4096)
	flush := func() {
		if !ordered {
			byPart := map[int][]int{}
			for i, r := range recs {
				byPart[r.Partition] = append(byPart[r.Partition], i)
			}
			for _, idx := range byPart {
				for i, j := 0, len(idx)-1; i < j; i, j = i+1, j-1 {
					recs[idx[i]].Version, recs[idx[j]].Version = recs[idx[j]].Version, recs[idx[i]].Version
				}
			}
		}
		if err := s.StoreAll(ctx, recs); err != nil {
			tb.Fatal(err)
		}
		recs = recs[:0]
	}
	for i := 0; i < n; i++ {
		k := []byte("job-" + strconv.Itoa(i%64) + "-key-" + strconv.Itoa(i))
		p := keyhash.Partition(k, keyhash.DefaultPartitions)
		seqs[p]++
		recs = append(recs, mapstore.Record{Partition: p, Version: mapstore.Version{Epoch: 1, Seq: seqs[p]}, Key: k, Value: value})
		if len(recs) == cap(recs) {
			flush()
		}
	}
	if len(recs) > 0 {
		flush()
	}
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
}

// mapEntry is what the root package keeps per key.
type mapEntry struct {
	val []byte
	ver mapstore.Version
}

// loadLikeTheMap loads every partition into a map of its own, with
// ReplayPartition and a version check per key (as the root package's
// loadFromStore does) or with ReplayPartitionKeys (keys), and returns the
// number of entries loaded.
func loadLikeTheMap(tb testing.TB, s *filestore.Store, keys bool) int {
	tb.Helper()
	ctx := context.Background()
	var next, total atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := int(next.Add(1) - 1); p < s.Partitions(); p = int(next.Add(1) - 1) {
				var entries map[string]mapEntry
				var err error
				if keys {
					err = s.ReplayPartitionKeys(ctx, p, func(n int) { entries = make(map[string]mapEntry, n) }, func(k string, r mapstore.Record) error {
						if r.Deleted {
							delete(entries, k)
						} else {
							entries[k] = mapEntry{val: r.Value, ver: r.Version}
						}
						return nil
					})
				} else {
					entries = make(map[string]mapEntry, s.PendingCount(p))
					err = s.ReplayPartition(ctx, p, func(r mapstore.Record) error {
						cur, ok := entries[string(r.Key)]
						switch {
						case ok && !cur.ver.Less(r.Version):
						case r.Deleted:
							delete(entries, string(r.Key))
						default:
							entries[string(r.Key)] = mapEntry{val: r.Value, ver: r.Version}
						}
						return nil
					})
				}
				if err != nil {
					tb.Error(err)
					return
				}
				total.Add(int64(len(entries)))
			}
		}()
	}
	wg.Wait()
	return int(total.Load())
}

// BenchmarkSmallMapDisk runs each of smallMapWorkloads at the default
// settings on local disk, then leaves the map idle for 5 s. It reports
// the bytes on disk per live byte after the idle period (disk/live), the
// most seen on disk while writing beyond the live bytes then
// (peak-over-live-MiB), and how long after the writes the disk was first
// within twice the live bytes (s-to-2x-live; -1: not within 5 s).
func BenchmarkSmallMapDisk(b *testing.B) {
	for _, w := range smallMapWorkloads {
		b.Run(w.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				dir := b.TempDir()
				s, m, _ := openSmallMap(b, dir)
				peak, peakLive := w.run(b, s, m, dir)
				b.StopTimer()
				live := m.liveBytes()
				disk, _, inTwice := settle(dir, live, 5*time.Second, true)
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(disk)/float64(live), "disk/live")
				b.ReportMetric(float64(peak-peakLive)/(1<<20), "peak-over-live-MiB")
				settled := -1.0
				if inTwice > 0 {
					settled = inTwice.Seconds()
				}
				b.ReportMetric(settled, "s-to-2x-live")
				b.StartTimer()
			}
		})
	}
}
