package filestore_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/partition"
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
			s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: partition.DefaultCount, SegmentSize: 4 << 20})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			m := newBenchModel(partition.DefaultCount)
			s.SetSnapshotSource(m.source)
			for p := 0; p < partition.DefaultCount; p++ {
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
