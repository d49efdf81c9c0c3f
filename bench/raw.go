package bench

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stowage/stowage/serde/record"
)

// RawGroupCommit measures the physical limit: writers goroutines each
// append n framed records of valueSize bytes to one file through a group
// committer (one write + one fdatasync per batch of whatever queued
// meanwhile). With zeroAhead > 0 the file is kept written with that many
// bytes of zeros past the records, so that a sync does not grow the file
// and flushes data without a journal commit: the disk's limit for a log
// prepared that way (etcd's and PostgreSQL's are). It returns records per
// second and records per fdatasync.
func RawGroupCommit(ctx context.Context, dir string, writers, n, valueSize int, zeroAhead int64) (perSec, perSync float64, err error) {
	path := filepath.Join(dir, "raw-group-commit.log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, 0, err
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
	syncs := 0
	var flusher sync.WaitGroup
	flusher.Add(1)
	go func() {
		defer flusher.Done()
		var buf, zeros []byte
		var written, zeroed int64
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
			var err error
			if end := written + int64(len(buf)); zeroAhead > 0 && end > zeroed {
				from := max(zeroed, end)
				if len(zeros) < int(end+zeroAhead-from) {
					zeros = make([]byte, end+zeroAhead-from)
				}
				_, err = f.WriteAt(zeros[:end+zeroAhead-from], from)
				zeroed = end + zeroAhead
			}
			if err == nil {
				_, err = f.Write(buf)
				written += int64(len(buf))
			}
			if err == nil {
				err = unix.Fdatasync(int(f.Fd()))
			}
			syncs++
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
		return 0, 0, err
	}
	return float64(writers*n) / elapsed.Seconds(), float64(writers*n) / float64(max(1, syncs)), nil
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
// CRC-32C, the floor of any load; it returns bytes read and the time
// taken. Each file's buffer is garbage once checksummed, so the reads
// after the first few land in memory the process already touched.
func RawReadCRC(dir string) (int64, time.Duration, error) {
	return rawReadCRC(dir, false)
}

// RawReadCRCKept is RawReadCRC keeping every file's bytes in memory until
// all are read, as a load must (the loaded values are those bytes): the
// reads land in memory the process has not touched before, whose pages
// the kernel must first provide, as the load's do.
func RawReadCRCKept(dir string) (int64, time.Duration, error) {
	return rawReadCRC(dir, true)
}

func rawReadCRC(dir string, keep bool) (int64, time.Duration, error) {
	start := time.Now()
	var total int64
	var sum uint32
	var kept [][]byte
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
		if keep {
			kept = append(kept, b)
		}
		return nil
	})
	took := time.Since(start)
	_ = sum
	runtime.KeepAlive(kept)
	return total, took, err
}

// RawReadCRCParallel is RawReadCRCKept with the files below dir split
// among GOMAXPROCS goroutines, each reading whole files and checksumming
// them: the floor of a load that uses every core.
func RawReadCRCParallel(dir string) (int64, time.Duration, error) {
	start := time.Now()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	var (
		mu    sync.Mutex
		total int64
		first error
		next  atomic.Int64
		wg    sync.WaitGroup
		all   [][]byte
	)
	for g := 0; g < runtime.GOMAXPROCS(0); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var n int64
			var sum uint32
			var kept [][]byte
			for {
				i := int(next.Add(1) - 1)
				if i >= len(paths) {
					break
				}
				b, err := os.ReadFile(paths[i])
				if err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					return
				}
				n += int64(len(b))
				sum ^= record.Checksum(b)
				kept = append(kept, b)
			}
			_ = sum
			mu.Lock()
			total += n
			all = append(all, kept...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	took := time.Since(start)
	runtime.KeepAlive(all)
	return total, took, first
}
