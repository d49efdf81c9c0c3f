package filestore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/memfs"
	"github.com/stowage/stowage/mapstore"
)

// slowSyncFS is a SyncOpen back end (memfs underneath) whose log files'
// Syncs take took each, and which closes entered at the first one.
type slowSyncFS struct {
	fsbackend.FS
	took    time.Duration
	entered chan struct{}
	once    sync.Once
}

func (f *slowSyncFS) Capabilities() fsbackend.Capabilities {
	return fsbackend.Capabilities{SyncOpen: true, AtomicRename: true, ConditionalCreate: true}
}

func (f *slowSyncFS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	w, err := f.FS.Create(ctx, name)
	if err != nil || !strings.Contains(name, "/log/") {
		return w, err
	}
	return &slowSyncWriter{Writer: w, f: f}, nil
}

type slowSyncWriter struct {
	fsbackend.Writer
	f *slowSyncFS
}

func (w *slowSyncWriter) Sync() error {
	w.f.once.Do(func() { close(w.f.entered) })
	time.Sleep(w.f.took)
	return w.Writer.Sync()
}

// Truncate hides memfs's: HDFS writers cannot truncate.
func (w *slowSyncWriter) Truncate(int64) error { return fsbackend.ErrUnsupported }

// openSlowSync opens a store of one partition (one open file) on a
// slowSyncFS whose Syncs take took, counting its batches.
func openSlowSync(t *testing.T, took, delay time.Duration) (*Store, *slowSyncFS, *batchCounter) {
	t.Helper()
	f := &slowSyncFS{FS: memfs.New(), took: took, entered: make(chan struct{})}
	var bc batchCounter
	s, err := Open(context.Background(), Options{FS: f, Partitions: 1, CommitDelay: delay, OnBatch: bc.onBatch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, f, &bc
}

// A lone writer on an open file never waits for company: every put is a
// batch and a Sync of its own, written as soon as it is queued.
func TestOpenFileLoneWriterNotDelayed(t *testing.T) {
	s, _, bc := openSlowSync(t, 0, time.Second)
	const puts = 50
	for i := range puts {
		if err := s.Store(context.Background(), groupRecord(fmt.Sprintf("k%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.w.delays.Load(); n != 0 {
		t.Errorf("%d batches of a lone writer waited for company, want 0", n)
	}
	if sizes := bc.get(); len(sizes) != puts {
		t.Errorf("%d batches for %d lone puts, want one each: %v", len(sizes), puts, sizes)
	}
}

// openFileCohorts runs 8 writers of 10 puts each on one open file whose
// Syncs take 20 ms: the first writer starts alone, the 7 others once its
// first put is being synced, so that they queue behind it. It returns the
// batch sizes.
func openFileCohorts(t *testing.T, delay time.Duration) []int {
	s, f, bc := openSlowSync(t, 20*time.Millisecond, delay)
	ctx := context.Background()
	const writers, puts = 8, 10
	var wg sync.WaitGroup
	write := func(w int) {
		defer wg.Done()
		for i := range puts {
			if err := s.Store(ctx, groupRecord(fmt.Sprintf("w%d-%d", w, i))); err != nil {
				t.Error(err)
				return
			}
		}
	}
	wg.Add(writers)
	go write(0)
	<-f.entered
	for w := 1; w < writers; w++ {
		go write(w)
	}
	wg.Wait()
	sizes := bc.get()
	total := 0
	for _, n := range sizes {
		total += n
	}
	if total != writers*puts {
		t.Fatalf("batches carried %d records, want %d: %v", total, writers*puts, sizes)
	}
	return sizes
}

// With the wait for company, the writer synced alone joins the 7 queued
// behind it, and from then on one Sync carries every writer: 80 puts in
// about 11 Syncs. Without it the writers stay split in two cohorts, the
// lone one and the 7, each with its own Sync: about 20.
func TestOpenFileWaitsForCompany(t *testing.T) {
	with := openFileCohorts(t, time.Second)
	without := openFileCohorts(t, -1)
	t.Logf("80 puts of 8 writers: %d Syncs with the wait (%v), %d without (%v)", len(with), with, len(without), without)
	if len(with) > 13 {
		t.Errorf("with the wait for company: %d Syncs for 80 puts of 8 writers, want at most 13: %v", len(with), with)
	}
	if len(without) < 17 {
		t.Errorf("without the wait: %d Syncs for 80 puts of 8 writers, want the two cohorts' 17 or more: %v", len(without), without)
	}
}

// Company that does not come ends the wait: the first writer's put is
// synced while the second's queues; the lane then expects both back, but
// the first writer is done, and the second's put is written once the
// wait ends (never longer than the last Sync took).
func TestOpenFileCompanyWaitEnds(t *testing.T) {
	s, f, bc := openSlowSync(t, 20*time.Millisecond, time.Hour)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { done <- s.Store(ctx, groupRecord("first")) }()
	<-f.entered
	second := make(chan error, 1)
	go func() { second <- s.Store(ctx, groupRecord("second")) }()
	for _, c := range []chan error{done, second} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
	if n := s.w.delays.Load(); n != 1 {
		t.Errorf("%d waits for company, want 1 (before the second put's batch)", n)
	}
	if sizes := bc.get(); len(sizes) != 2 {
		t.Errorf("batches %v, want two of one put each", sizes)
	}
	var got []string
	for p := range 1 {
		if err := s.LoadPartition(ctx, p, func(r mapstore.Record) error { got = append(got, string(r.Key)); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 {
		t.Errorf("loaded %v, want both puts", got)
	}
}
