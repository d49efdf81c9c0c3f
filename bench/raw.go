package bench

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stowage/stowage/serde/record"
)

// RawGroupCommit measures the physical limit: writers goroutines each
// append n framed records of valueSize bytes to one file through a group
// committer (one write + one fdatasync per batch of whatever queued
// meanwhile). It returns records per second.
func RawGroupCommit(ctx context.Context, dir string, writers, n, valueSize int) (float64, error) {
	path := filepath.Join(dir, "raw-group-commit.log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	defer os.Remove(path)
	defer f.Close()
	type req struct {
		b    []byte
		done chan error
	}
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	var queue []req
	stop := false
	var flusher sync.WaitGroup
	flusher.Add(1)
	go func() {
		defer flusher.Done()
		var buf []byte
		for {
			mu.Lock()
			for len(queue) == 0 && !stop {
				cond.Wait()
			}
			if len(queue) == 0 {
				mu.Unlock()
				return
			}
			batch := queue
			queue = nil
			mu.Unlock()
			buf = buf[:0]
			for _, r := range batch {
				buf = append(buf, r.b...)
			}
			_, err := f.Write(buf)
			if err == nil {
				err = unix.Fdatasync(int(f.Fd()))
			}
			for _, r := range batch {
				r.done <- err
			}
		}
	}()
	value := make([]byte, valueSize)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			done := make(chan error, 1)
			key := make([]byte, 0, 32)
			for i := 0; i < n && ctx.Err() == nil; i++ {
				key = appendKey(key[:0], w, i)
				// the same framing and roughly the same payload a map record has
				payload := append(append(make([]byte, 0, 16+len(key)+len(value)), key...), value...)
				b := record.Append(nil, 'P', payload)
				mu.Lock()
				queue = append(queue, req{b, done})
				cond.Signal()
				mu.Unlock()
				if err := <-done; err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	mu.Lock()
	stop = true
	cond.Signal()
	mu.Unlock()
	flusher.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(writers*n) / elapsed.Seconds(), nil
}

func appendKey(b []byte, w, i int) []byte {
	b = append(b, "job-"...)
	b = appendInt(b, w)
	b = append(b, "-key-"...)
	return appendInt(b, i)
}

func appendInt(b []byte, v int) []byte {
	var tmp [20]byte
	i := len(tmp)
	if v == 0 {
		return append(b, '0')
	}
	for v > 0 {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, tmp[i:]...)
}

// RawReadCRC reads every file below dir sequentially and computes its
// CRC-32C, the floor of any load; it returns bytes read and the time taken.
func RawReadCRC(dir string) (int64, time.Duration, error) {
	start := time.Now()
	var total int64
	var sum uint32
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		total += int64(len(b))
		sum ^= record.Checksum(b)
		return nil
	})
	_ = sum
	return total, time.Since(start), err
}
