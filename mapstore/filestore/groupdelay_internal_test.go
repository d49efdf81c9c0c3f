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

// Once a batch carried several callers, the next batch waits for company:
// a caller that comes alone while a busy store syncs shares its sync with
// the callers that come after it, up to twice the previous batch's.
func TestBusyWritersShareSyncs(t *testing.T) {
	ctx := context.Background()
	f, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	g := &gateFS{FS: f, entered: make(chan struct{}), pass: make(chan struct{})}
	var bc batchCounter
	// The delay outlasts the test: the wait ends only by company.
	s, err := Open(ctx, Options{FS: g, Partitions: 1, CommitDelay: time.Hour, OnBatch: bc.onBatch})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	put := func(key string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Store(ctx, groupRecord(key)); err != nil {
				t.Error(err)
			}
		}()
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting until %s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	queued := func(n int) func() bool {
		return func() bool {
			s.w.mu.Lock()
			defer s.w.mu.Unlock()
			return len(s.w.queue) == n
		}
	}
	put("a")
	<-g.entered // a's batch syncs
	put("b")
	put("c")
	waitFor("b and c are queued", queued(2))
	g.pass <- struct{}{} // a done; b and c are the next batch
	<-g.entered
	put("d")
	waitFor("d is queued", queued(1))
	g.pass <- struct{}{} // b and c done; d waits for company
	waitFor("the flusher waits for company", func() bool {
		s.w.mu.Lock()
		defer s.w.mu.Unlock()
		return s.w.target == 4
	})
	put("e")
	put("f")
	put("g")
	<-g.entered // d, e, f and g in one batch
	g.pass <- struct{}{}
	wg.Wait()
	close(g.pass) // every later sync (Close) passes at once
	go func() {
		for range g.entered {
		}
	}()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	close(g.entered)
	if got, want := fmt.Sprint(bc.get()), "[1 2 4]"; got != want {
		t.Errorf("batches of %s records, want %s", got, want)
	}
	if n := s.w.delays.Load(); n != 1 {
		t.Errorf("%d batches waited for company, want 1", n)
	}
}
