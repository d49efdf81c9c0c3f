package fsbackendtest

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

func init() {
	register("ConcurrentCreate", testConcurrentCreate)
	register("ConcurrentCreateSameName", testConcurrentCreateSameName)
	register("ConcurrentCreateRemove", testConcurrentCreateRemove)
}

// testConcurrentCreateRemove creates and removes files in one directory
// from several goroutines, so that removes keep emptying the directory
// (which back ends with directories may then remove) while creates need it.
func testConcurrentCreateRemove(t *testing.T, e *env) {
	var wg sync.WaitGroup
	errs := make(chan error, e.opts.Concurrency*2)
	for w := 0; w < e.opts.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				name := fmt.Sprintf("d/sub/%d-%d", w, i)
				if err := fsbackend.WriteFile(e.ctx, e.fs, name, []byte(name)); err != nil {
					errs <- fmt.Errorf("WriteFile(%q): %w", name, err)
					return
				}
				if err := e.fs.Remove(e.ctx, name); err != nil {
					errs <- fmt.Errorf("Remove(%q): %w", name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	e.wantList("d")
}

func testConcurrentCreate(t *testing.T, e *env) {
	var wg sync.WaitGroup
	errs := make(chan error, e.opts.Concurrency*e.opts.FilesPerWorker)
	var want []string
	for w := 0; w < e.opts.Concurrency; w++ {
		for i := 0; i < e.opts.FilesPerWorker; i++ {
			want = append(want, fmt.Sprintf("shared/w%02d/f%02d", w, i))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < e.opts.FilesPerWorker; i++ {
				name := fmt.Sprintf("shared/w%02d/f%02d", w, i)
				wr, err := e.fs.Create(e.ctx, name)
				if err != nil {
					errs <- fmt.Errorf("Create(%q): %w", name, err)
					return
				}
				if _, err := wr.Write([]byte(name)); err != nil {
					_ = wr.Abort()
					errs <- fmt.Errorf("Write(%q): %w", name, err)
					return
				}
				if err := wr.Close(); err != nil {
					errs <- fmt.Errorf("Close(%q): %w", name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	slices.Sort(want)
	e.wantList("shared", want...)
	for _, name := range want {
		e.wantContent(name, []byte(name))
	}
}

// testConcurrentCreateSameName races several writers for one name: with
// ConditionalCreate exactly one finishes and the others fail with
// fs.ErrExist, at Create or at Close.
func testConcurrentCreateSameName(t *testing.T, e *env) {
	if !e.caps().ConditionalCreate {
		t.Skip("back end has no ConditionalCreate")
	}
	n := e.opts.Concurrency
	results := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			wr, err := e.fs.Create(e.ctx, "lock")
			if err != nil {
				results[w] = err
				return
			}
			if _, err := wr.Write([]byte(fmt.Sprintf("writer-%d", w))); err != nil {
				results[w] = err
				_ = wr.Abort()
				return
			}
			if err := wr.Close(); err != nil {
				results[w] = err
				_ = wr.Abort()
			}
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for w, err := range results {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both created the same name", winner, w)
		case err == nil:
			winner = w
		case !errors.Is(err, fs.ErrExist):
			t.Errorf("writer %d: %v, want nil or an error matching fs.ErrExist", w, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no writer created the name: %v", results)
	}
	e.wantContent("lock", []byte(fmt.Sprintf("writer-%d", winner)))
}
