package filestore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/mapstore"
)

// batchCounter records the size of every group-commit batch (OnBatch).
type batchCounter struct {
	mu    sync.Mutex
	sizes []int
}

func (c *batchCounter) onBatch(records, _ int, _ time.Duration, err error) {
	if err != nil {
		return
	}
	c.mu.Lock()
	c.sizes = append(c.sizes, records)
	c.mu.Unlock()
}

func (c *batchCounter) get() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.sizes...)
}

var groupSeq atomic.Uint64

func groupRecord(key string) mapstore.Record {
	return mapstore.Record{Version: mapstore.Version{Epoch: 1, Seq: groupSeq.Add(1)}, Key: []byte(key), Value: []byte("v")}
}

// A lone writer, one put after another, never waits for company: every
// put is a batch of its own, written as soon as it is queued, without
// waiting for company (a wait would be counted, and would cost the
// 200 puts 4 s).
func TestLoneWriterNotDelayed(t *testing.T) {
	ctx := context.Background()
	f, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var bc batchCounter
	s, err := Open(ctx, Options{FS: f, Partitions: 1, CommitDelay: 20 * time.Millisecond, OnBatch: bc.onBatch})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const puts = 200
	for i := range puts {
		if err := s.Store(ctx, groupRecord(fmt.Sprintf("k%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.w.delays.Load(); n != 0 {
		t.Errorf("%d batches of a lone writer waited for company, want 0", n)
	}
	if sizes := bc.get(); len(sizes) != puts {
		t.Errorf("%d batches for %d lone puts, want one each", len(sizes), puts)
	}
}

// gateFS holds every Sync of a log segment until the test lets it pass,
// and tells the test when one is waiting.
type gateFS struct {
	fsbackend.FS
	entered chan struct{}
	pass    chan struct{}
}

func (g *gateFS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	w, err := g.FS.Create(ctx, name)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return w, err
	}
	return &gateWriter{Writer: w, g: g}, nil
}

type gateWriter struct {
	fsbackend.Writer
	g *gateFS
}

func (w *gateWriter) Sync() error {
	w.g.entered <- struct{}{}
	<-w.g.pass
	return w.Writer.Sync()
}

// gatedStore is a store whose log syncs wait for the test (gateFS), with
// helpers to put from goroutines and to wait for the queue.
type gatedStore struct {
	t  *testing.T
	s  *Store
	g  *gateFS
	bc batchCounter
	wg sync.WaitGroup
}

func openGated(t *testing.T, delay time.Duration) *gatedStore {
	f, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gs := &gatedStore{t: t, g: &gateFS{FS: f, entered: make(chan struct{}), pass: make(chan struct{})}}
	gs.s, err = Open(context.Background(), Options{FS: gs.g, Partitions: 1, CommitDelay: delay, OnBatch: gs.bc.onBatch})
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

func (gs *gatedStore) put(key string) {
	gs.wg.Add(1)
	go func() {
		defer gs.wg.Done()
		if err := gs.s.Store(context.Background(), groupRecord(key)); err != nil {
			gs.t.Error(err)
		}
	}()
}

func (gs *gatedStore) waitFor(what string, cond func(w *writer) bool) {
	gs.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		gs.s.w.mu.Lock()
		ok := cond(gs.s.w)
		gs.s.w.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			gs.t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func (gs *gatedStore) waitQueued(n int) {
	gs.t.Helper()
	gs.waitFor(fmt.Sprintf("%d are queued", n), func(w *writer) bool { return len(w.queue) == n })
}

// close waits for every put, lets every later sync pass and closes the
// store; it returns the batch sizes and the number of waits for company.
func (gs *gatedStore) close() (string, int64) {
	gs.wg.Wait()
	close(gs.g.pass)
	go func() {
		for range gs.g.entered {
		}
	}()
	if err := gs.s.Close(); err != nil {
		gs.t.Fatal(err)
	}
	close(gs.g.entered)
	return fmt.Sprint(gs.bc.get()), gs.s.w.delays.Load()
}

// loneAfterPair puts a, then b and c together while a syncs, then d
// alone while b and c sync, and closes the store (close's results).
func (gs *gatedStore) loneAfterPair() (string, int64) {
	gs.put("a")
	<-gs.g.entered
	gs.put("b")
	gs.put("c")
	gs.waitQueued(2)
	gs.g.pass <- struct{}{}
	<-gs.g.entered // b and c
	gs.put("d")
	gs.waitQueued(1)
	gs.g.pass <- struct{}{} // d waits for company, or not
	<-gs.g.entered
	gs.g.pass <- struct{}{}
	return gs.close()
}

// Once a batch carried several callers, the next batch waits for company:
// a caller that comes alone while a busy store syncs waits until as many
// callers as the previous batch's are queued, and a queue that holds that
// many already is written at once.
func TestBusyWritersShareSyncs(t *testing.T) {
	// The delay outlasts the test: a wait ends only by company.
	gs := openGated(t, time.Hour)
	gs.put("a")
	<-gs.g.entered // a's batch syncs
	gs.put("b")
	gs.put("c")
	gs.waitQueued(2)
	gs.g.pass <- struct{}{} // a done; b and c are the next batch
	<-gs.g.entered
	gs.put("d")
	gs.waitQueued(1)
	gs.g.pass <- struct{}{} // b and c done; d waits for company
	gs.waitFor("the flusher waits for company", func(w *writer) bool { return w.target == 2 })
	gs.put("e")
	<-gs.g.entered // d and e in one batch
	gs.put("f")
	gs.put("g")
	gs.put("h")
	gs.waitQueued(3)
	gs.g.pass <- struct{}{} // d and e done; f, g and h go at once
	<-gs.g.entered
	gs.g.pass <- struct{}{}
	batches, waits := gs.close()
	if want := "[1 2 2 3]"; batches != want {
		t.Errorf("batches of %s records, want %s", batches, want)
	}
	if waits != 1 {
		t.Errorf("%d batches waited for company, want 1", waits)
	}
}

// Company that does not come does not hold a caller beyond the delay: the
// lone caller after a batch of two is written alone once the delay passed.
func TestCompanyWaitEndsAtDelay(t *testing.T) {
	gs := openGated(t, 20*time.Millisecond)
	batches, waits := gs.loneAfterPair()
	if want := "[1 2 1]"; batches != want {
		t.Errorf("batches of %s records, want %s", batches, want)
	}
	if waits != 1 {
		t.Errorf("%d batches waited for company, want 1", waits)
	}
}

// A negative delay turns the wait off: the same callers never wait.
func TestNegativeCommitDelayNeverWaits(t *testing.T) {
	gs := openGated(t, -1)
	batches, waits := gs.loneAfterPair()
	if want := "[1 2 1]"; batches != want {
		t.Errorf("batches of %s records, want %s", batches, want)
	}
	if waits != 0 {
		t.Errorf("%d batches waited for company, want 0", waits)
	}
}
