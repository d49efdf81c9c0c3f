package boltstore

import (
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkCommit compares the group commit with bolt.DB.Batch on the
// same work: 64 writers, one 256 B put each into one of 271 buckets.
func BenchmarkCommit(b *testing.B) {
	for _, mode := range []string{"group", "bbolt-Batch"} {
		b.Run(mode, func(b *testing.B) {
			db, err := bolt.Open(filepath.Join(b.TempDir(), "c.db"), 0o600, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			const buckets = 271
			if err := db.Update(func(tx *bolt.Tx) error {
				for p := 0; p < buckets; p++ {
					if _, err := tx.CreateBucket(partBucket(p)); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			c := &committer{db: db}
			value := make([]byte, 256)
			var next atomic.Int64
			b.SetParallelism((64 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := int(next.Add(1))
					key := []byte("job-" + strconv.Itoa(i))
					put := func(tx *bolt.Tx) error { return tx.Bucket(partBucket(i%buckets)).Put(key, value) }
					var err error
					if mode == "group" {
						err = c.commit(put)
					} else {
						err = db.Batch(put)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "puts/s")
		})
	}
}
