package filestore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/serde/keyhash"
)

// objectStoreLatency is what the object-store benchmarks add to every
// request: real object stores answer a PUT in tens of milliseconds.
const objectStoreLatency = 20 * time.Millisecond

// BenchmarkObjectStoreWriteThrough measures write-through puts/s of
// 256-byte values on an S3 server answering every request after 20 ms:
// 64 writers with the default number of batch files in flight and with
// one at a time (what the store did before the pipelined commit), one
// writer, and, as the floor, a writer that makes each put one object,
// one request at a time.
func BenchmarkObjectStoreWriteThrough(b *testing.B) {
	for _, bc := range []struct {
		name     string
		writers  int
		inFlight int
	}{
		{"writers=64/inflight=8", 64, filestore.DefaultMaxInFlight},
		{"writers=64/inflight=1", 64, 1},
		{"writers=1/inflight=8", 1, filestore.DefaultMaxInFlight},
		{"writers=64/inflight=16", 64, 16},
		{"writers=64/inflight=32", 64, 32},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv, f := newSlowServer(b, objectStoreLatency)
			ctx := context.Background()
			s, err := filestore.Open(ctx, filestore.Options{FS: f, MaxInFlight: bc.inFlight})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			m := newBenchModel(keyhash.DefaultPartitions)
			s.SetSnapshotSource(m.source)
			val := make([]byte, 256)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for w := 0; w < bc.writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						if err := s.Store(ctx, m.put([]byte(fmt.Sprintf("key-%d", i%20000)), val)); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			took := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/took.Seconds(), "puts/s")
			b.ReportMetric(float64(b.N)/float64(max(1, srv.logPuts.Load())), "puts/object")
			b.ReportMetric(float64(srv.most.Load()), "max-in-flight")
			b.ReportMetric(float64(srv.logSent.Load())/float64(b.N), "log-B/put")
		})
	}
	b.Run("one-request-at-a-time", func(b *testing.B) {
		_, f := newSlowServer(b, objectStoreLatency)
		ctx := context.Background()
		val := make([]byte, 256+40)
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			if err := fsbackend.WriteFile(ctx, f, fmt.Sprintf("g1/log/one/%012d.log", i), val); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "puts/s")
	})
}
