package checkpoint_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/memfs"
)

// statGateFS holds each Stat until n Stats have arrived, or for at most
// bound: stores that are not kept apart all pass their exists check before
// any of them renames, which is the interleaving that let two stores of
// one checkpoint both succeed. Stores that take turns arrive one at a time,
// so each waits out the bound (a limit, not something the test relies on).
type statGateFS struct {
	fsbackend.FS
	n     int
	bound time.Duration

	mu      sync.Mutex
	arrived int
	all     chan struct{}
}

func newStatGate(fsys fsbackend.FS, n int) *statGateFS {
	return &statGateFS{FS: fsys, n: n, bound: 50 * time.Millisecond, all: make(chan struct{})}
}

func (g *statGateFS) Stat(ctx context.Context, name string) (fsbackend.FileInfo, error) {
	g.mu.Lock()
	g.arrived++
	if g.arrived == g.n {
		close(g.all)
	}
	g.mu.Unlock()
	timer := time.NewTimer(g.bound)
	select {
	case <-g.all:
	case <-timer.C:
	case <-ctx.Done():
	}
	timer.Stop()
	return g.FS.Stat(ctx, name)
}

// Concurrent stores of one (job, pipeline, checkpoint id) with different
// states: exactly one succeeds, every other fails with ErrExists, and the
// stored checkpoint is the winner's. On local disk and memfs (the rename
// path) and without atomic rename (the conditional-create path).
func TestConcurrentStoresOfOneCheckpoint(t *testing.T) {
	const n = 4
	for _, tc := range []struct {
		name string
		fs   func(t *testing.T) fsbackend.FS
	}{
		{"local", func(t *testing.T) fsbackend.FS { return newLocal(t) }},
		{"memfs", func(t *testing.T) fsbackend.FS { return memfs.New() }},
		{"without-atomic-rename", func(t *testing.T) fsbackend.FS { return objectStoreFS{memfs.New()} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newStatGate(tc.fs(t), n)
			s := checkpointtest.Open(t, g, checkpoint.Options{})
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					st := checkpointtest.State("j", 1, 7)
					st.States = fmt.Appendf(nil, "state of writer %d", i)
					_, errs[i] = s.StoreCheckpoint(t.Context(), st)
				}()
			}
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner < 0:
					winner = i
				case err == nil:
					t.Errorf("writers %d and %d both stored checkpoint 7 with different states", winner, i)
				case !errors.Is(err, checkpoint.ErrExists):
					t.Errorf("writer %d: %v, want ErrExists", i, err)
				}
			}
			if winner < 0 {
				t.Fatalf("no store succeeded: %v", errs)
			}
			got, err := s.GetCheckpoint(t.Context(), "j", 1, 7)
			if want := fmt.Sprintf("state of writer %d", winner); err != nil || string(got.States) != want {
				t.Fatalf("stored state %q, %v; want %q", got.States, err, want)
			}
			if files := checkpointtest.CheckpointFiles(t, g, "j"); len(files) != 1 {
				t.Fatalf("files %v, want the one checkpoint", files)
			}
		})
	}
}

// A store waiting for its turn gives up when its context ends.
func TestStoreWaitingForItsTurnHonoursContext(t *testing.T) {
	mem := memfs.New()
	g := &gateFS{FS: mem, gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	s := checkpointtest.Open(t, g, checkpoint.Options{})
	first := make(chan error, 1)
	go func() {
		_, err := s.StoreCheckpoint(t.Context(), checkpointtest.State("j", 1, 1))
		first <- err
	}()
	<-g.entered // the first store holds the name, blocked in Create
	cctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.StoreCheckpoint(cctx, checkpointtest.State("j", 1, 1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("second store with a cancelled context: %v, want context.Canceled", err)
	}
	close(g.gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}
