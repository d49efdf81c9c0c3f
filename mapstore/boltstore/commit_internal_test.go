package boltstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
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

// TestCommitFailureIsolated commits from many goroutines at once, one of
// whose functions fails: only that one fails, every other change is
// committed (a shared transaction that failed is retried change by
// change).
func TestCommitFailureIsolated(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "c.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bucket := []byte("b")
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(bucket); return err }); err != nil {
		t.Fatal(err)
	}
	c := &committer{db: db}
	bad := errors.New("this change fails")
	const writers, each = 16, 20
	var wg sync.WaitGroup
	var failed atomic.Int64
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				key := []byte(fmt.Sprint(w, "-", i))
				fail := w == 3 && i%5 == 0
				err := c.commit(func(tx *bolt.Tx) error {
					if err := tx.Bucket(bucket).Put(key, []byte("v")); err != nil {
						return err
					}
					if fail {
						return bad
					}
					return nil
				})
				switch {
				case fail && !errors.Is(err, bad):
					t.Errorf("failing change %s: err %v", key, err)
				case fail:
					failed.Add(1)
				case err != nil:
					t.Errorf("change %s: %v", key, err)
				}
			}
		}()
	}
	wg.Wait()
	n := 0
	if err := db.View(func(tx *bolt.Tx) error { n = tx.Bucket(bucket).Stats().KeyN; return nil }); err != nil {
		t.Fatal(err)
	}
	if want := writers*each - int(failed.Load()); n != want || failed.Load() != each/5 {
		t.Fatalf("%d keys committed, want %d (%d changes failed, want %d)", n, want, failed.Load(), each/5)
	}
}
