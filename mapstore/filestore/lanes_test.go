package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/memfs"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/serde/keyhash"
)

// overlapFS is a SyncOpen back end (memfs underneath) whose Syncs count
// how many are in flight at once, in all and per file. A Sync waits until
// another one is in flight too (or, once, until a while passed without
// one, after which none waits), so that Syncs that can overlap do.
// failAt, if set, fails that Sync (counted from 1) of the whole store.
type overlapFS struct {
	fsbackend.FS
	failAt int64

	mu       sync.Mutex
	cond     *sync.Cond
	inflight int
	most     int
	perFile  map[string]int
	twice    bool // a file had two Syncs in flight at once
	gaveUp   bool
	syncs    int64
	creates  atomic.Int64
}

func newOverlapFS() *overlapFS {
	f := &overlapFS{FS: memfs.New(), perFile: map[string]int{}}
	f.cond = sync.NewCond(&f.mu)
	return f
}

func (f *overlapFS) Capabilities() fsbackend.Capabilities {
	return fsbackend.Capabilities{SyncOpen: true, AtomicRename: true, ConditionalCreate: true}
}

func (f *overlapFS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	w, err := f.FS.Create(ctx, name)
	if err != nil || !strings.Contains(name, "/log/") {
		return w, err
	}
	f.creates.Add(1)
	return &overlapWriter{Writer: w, f: f, name: name}, nil
}

type overlapWriter struct {
	fsbackend.Writer
	f    *overlapFS
	name string
}

// errInjected is the failure of overlapFS's failAt-th Sync.
var errInjected = errors.New("injected sync failure")

func (w *overlapWriter) Sync() error {
	f := w.f
	f.mu.Lock()
	f.syncs++
	if f.syncs == f.failAt {
		f.mu.Unlock()
		return errInjected
	}
	f.inflight++
	f.perFile[w.name]++
	if f.perFile[w.name] > 1 {
		f.twice = true
	}
	f.most = max(f.most, f.inflight)
	f.cond.Broadcast()
	if !f.gaveUp {
		timer := time.AfterFunc(2*time.Second, func() {
			f.mu.Lock()
			f.gaveUp = true
			f.cond.Broadcast()
			f.mu.Unlock()
		})
		for f.inflight < 2 && !f.gaveUp {
			f.cond.Wait()
		}
		timer.Stop()
	}
	f.inflight--
	f.perFile[w.name]--
	f.mu.Unlock()
	return w.Writer.Sync()
}

// Truncate hides memfs's: HDFS writers cannot truncate.
func (w *overlapWriter) Truncate(int64) error { return fsbackend.ErrUnsupported }

// Many writers on a SyncOpen back end with two open files keep several
// Syncs in flight at once, each on a different open file (one per lane),
// never two on one file; every acknowledged put loads back.
func TestOpenFileLanesSyncInParallel(t *testing.T) {
	f := newOverlapFS()
	ctx := context.Background()
	s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: parts, OpenFiles: 2})
	if err != nil {
		t.Fatal(err)
	}
	var seq atomic.Uint64
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := range 10 {
				key := fmt.Sprintf("w%d-%d", w, i)
				r := mapstore.Record{Partition: keyhash.Partition([]byte(key), parts), Key: []byte(key), Value: []byte(key),
					Version: mapstore.Version{Epoch: 1, Seq: seq.Add(1)}}
				if err := s.Store(ctx, r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	most, twice, syncs := f.most, f.twice, f.syncs
	f.mu.Unlock()
	t.Logf("160 puts: %d syncs, at most %d in flight at once, %d log files", syncs, most, f.creates.Load())
	if most < 2 {
		t.Errorf("at most %d Sync in flight at once, want several (one per lane)", most)
	}
	if twice {
		t.Error("two Syncs in flight at once on one file")
	}
	if n := countEntries(t, f); n != 160 {
		t.Fatalf("loaded %d entries, want 160", n)
	}
}

// A failed Sync fails the puts of its batch; the lane starts a new file
// for its next batch, and everything acknowledged loads back.
func TestOpenFileLaneSyncFailure(t *testing.T) {
	f := newOverlapFS()
	f.gaveUp = true // no waiting: one writer
	f.failAt = 3
	ctx := context.Background()
	s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	keys := keysOf(1, 5, "fail")
	acked := 0
	for i, k := range keys {
		err := openPut(ctx, s, k, uint64(i+1), []byte(k))
		switch {
		case i == 2 && !errors.Is(err, errInjected):
			t.Fatalf("put %d, whose Sync fails: %v, want the injected failure", i, err)
		case i != 2 && err != nil:
			t.Fatalf("put %d: %v", i, err)
		case err == nil:
			acked++
		}
	}
	if c := f.creates.Load(); c != 2 {
		t.Errorf("%d log files created for one lane with a failed Sync, want 2 (a new one after the failure)", c)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := countEntries(t, f); n < acked {
		t.Fatalf("loaded %d entries, want the %d acknowledged at least", n, acked)
	}
}

// countEntries opens the store on f again and counts what it loads.
func countEntries(t *testing.T, f fsbackend.FS) int {
	t.Helper()
	ctx := context.Background()
	s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	for p := range parts {
		if err := s.LoadPartition(ctx, p, func(mapstore.Record) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	return n
}
