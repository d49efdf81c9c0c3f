package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/stowage/stowage/mapstore/boltstore"
)

// BoltPuts measures plain bbolt, the reference `stowage bench` compares
// the map stores against: writers goroutines each put n values of
// valueSize bytes (n per writer, writers*n in all) under distinct keys
// into a new file at path, through DB.Batch with bbolt's default batch
// settings (batch true) or one DB.Update per put (batch false). Every
// commit is fdatasync'd. It returns puts per second. path must not exist;
// the file is removed afterwards. A cancelled ctx stops the writers and
// is returned.
func BoltPuts(ctx context.Context, path string, writers, n, valueSize int, batch bool) (float64, error) {
	if writers <= 0 || n <= 0 || valueSize < 0 {
		return 0, fmt.Errorf("stowage/bench: bbolt: writers %d, puts %d, value size %d: want positive counts", writers, n, valueSize)
	}
	switch _, err := os.Lstat(path); {
	case err == nil:
		return 0, fmt.Errorf("stowage/bench: bbolt file %s exists; remove it or pick a fresh path (it is never overwritten)", path)
	case !errors.Is(err, fs.ErrNotExist):
		return 0, fmt.Errorf("stowage/bench: bbolt file %s: %w", path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: boltstore.DefaultTimeout})
	if err != nil {
		return 0, fmt.Errorf("stowage/bench: bbolt file %s: %w", path, err)
	}
	defer os.Remove(path)
	defer db.Close()
	bucket := []byte("bench")
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(bucket); return err }); err != nil {
		return 0, fmt.Errorf("stowage/bench: bbolt file %s: %w", path, err)
	}
	value := make([]byte, valueSize)
	for i := range value {
		value[i] = byte(i)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	start := time.Now()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prefix := "job-" + strconv.Itoa(w) + "-key-"
			for i := 0; i < n; i++ {
				if err := ctx.Err(); err != nil {
					errs <- err
					return
				}
				key := strconv.AppendInt([]byte(prefix), int64(i), 10)
				put := func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put(key, value) }
				var err error
				if batch {
					err = db.Batch(put)
				} else {
					err = db.Update(put)
				}
				if err != nil {
					errs <- fmt.Errorf("stowage/bench: bbolt file %s: put %s: %w", path, key, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(writers*n) / took.Seconds(), nil
}
