package boltstore

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchPuts measures bbolt as a reference for `stowage bench`: writers
// goroutines each put n values of valueSize bytes into a fresh file at
// path, through DB.Batch (batch true) or one Update per put. It returns
// puts per second.
func BenchPuts(ctx context.Context, path string, writers, n, valueSize int, batch bool) (float64, error) {
	os.Remove(path)
	defer os.Remove(path)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	bucket := []byte("bench")
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists(bucket); return err }); err != nil {
		return 0, err
	}
	value := make([]byte, valueSize)
	start := time.Now()
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < n && ctx.Err() == nil; i++ {
				key := []byte(fmt.Sprintf("job-%d-key-%d", w, i))
				put := func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put(key, value) }
				var err error
				if batch {
					err = db.Batch(put)
				} else {
					err = db.Update(put)
				}
				if err != nil {
					errc <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	el := time.Since(start)
	close(errc)
	if err := <-errc; err != nil {
		return 0, err
	}
	return float64(writers*n) / el.Seconds(), nil
}
