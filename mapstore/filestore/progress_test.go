package filestore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
)

// progressLog records what a WithProgress function is told.
type progressLog struct {
	mu          sync.Mutex
	calls       int
	done, total int
	backwards   bool
}

func (l *progressLog) fn(done, total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if done < l.done || total < l.total || done > total {
		l.backwards = true
	}
	l.calls++
	l.done, l.total = done, total
}

// TestProgress: Open, Entries and CompactOffline under WithProgress
// report their work, never going backwards, and end with all of it done.
func TestProgress(t *testing.T) {
	e := newEnv(t)
	s := e.open(filestore.Options{SegmentSize: 2 << 10})
	m := newModel(1)
	want := fill(t, s, m, 200, "k")
	s.Close()
	logs := len(logFiles(t, e.dir))
	if logs < 2 {
		t.Fatalf("%d log files, want several", logs)
	}

	var o progressLog
	s, err := filestore.Open(filestore.WithProgress(context.Background(), o.fn), filestore.Options{FS: e.fs, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if o.backwards || o.done != logs || o.total != logs {
		t.Fatalf("Open: progress ended at %d of %d (backwards %v), want %d of %d (log files)", o.done, o.total, o.backwards, logs, logs)
	}

	var l progressLog
	ctx := filestore.WithProgress(context.Background(), l.fn)
	n := 0
	if err := s.Entries(ctx, func(r mapstore.Record) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Fatalf("Entries gave %d entries, want %d", n, len(want))
	}
	if l.backwards || l.done != logs+parts || l.total != logs+parts {
		t.Fatalf("Entries: progress ended at %d of %d (backwards %v), want %d of %d (log files + partitions)", l.done, l.total, l.backwards, logs+parts, logs+parts)
	}

	var c progressLog
	if err := s.CompactOffline(filestore.WithProgress(context.Background(), c.fn)); err != nil {
		t.Fatal(err)
	}
	// Every partition loaded, then every one snapshotted.
	if c.backwards || c.done != 2*parts || c.total != 2*parts {
		t.Fatalf("CompactOffline: progress ended at %d of %d (backwards %v), want %d of %d", c.done, c.total, c.backwards, 2*parts, 2*parts)
	}

	s2, err := filestore.Open(context.Background(), filestore.Options{FS: e.fs, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := len(loadAll(t, s2)); got != len(want) {
		t.Fatalf("after CompactOffline %d entries load, want %d", got, len(want))
	}
}
