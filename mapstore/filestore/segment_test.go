package filestore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/memfs"
	"github.com/stowage/stowage/mapstore/filestore"
)

// logNames lists the log files of f, sorted.
func logNames(t *testing.T, f fsbackend.FS) []fsbackend.FileInfo {
	t.Helper()
	list, err := f.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []fsbackend.FileInfo
	for _, fi := range list {
		if strings.HasSuffix(fi.Name, ".log") {
			out = append(out, fi)
		}
	}
	return out
}

// TestCrashKeepsAcknowledgedRecordsOfAnOpenSegment: records acknowledged
// in a segment that was just created (synced, never closed) survive a
// crash. The crash-simulating FS keeps a file once its first Sync
// returned, as the local back end does since it syncs the directory then;
// a store that acknowledged before that Sync, or an FS that made the
// entry durable only at Close, loses them here.
func TestCrashKeepsAcknowledgedRecordsOfAnOpenSegment(t *testing.T) {
	ctx := context.Background()
	mem := memfs.New()
	s, err := filestore.Open(ctx, filestore.Options{FS: mem, Partitions: parts, SegmentSize: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := newModel(1)
	acked := map[string]string{}
	for i := 0; len(logNames(t, mem)) < 2; i++ {
		if i > 100 {
			t.Fatal("no second segment after 100 records of 100 bytes with a 1 KiB segment size")
		}
		k, v := fmt.Sprintf("k%03d", i), strings.Repeat("v", 100)
		if err := s.Store(ctx, m.next(k, []byte(v), false)); err != nil {
			t.Fatal(err)
		}
		acked[k] = v
	}
	// The last record went to a fresh segment; write two more into it.
	for i := 0; i < 2; i++ {
		k := fmt.Sprintf("open%d", i)
		if err := s.Store(ctx, m.next(k, []byte("x"), false)); err != nil {
			t.Fatal(err)
		}
		acked[k] = "x"
	}
	before := logNames(t, mem)
	mem.Crash()
	after := logNames(t, mem)
	if len(after) != len(before) {
		t.Fatalf("log files before the crash %v, after %v: the open segment was lost", before, after)
	}
	s2, err := filestore.Open(ctx, filestore.Options{FS: mem, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	expectSame(t, loadAll(t, s2), acked)
}

// TestSegmentRollsAtSegmentSize: on a back end with durable append, the
// log goes to a new segment file once the current one reached
// SegmentSize (block.size), so no segment is larger than SegmentSize plus
// the one batch that crossed it, and every segment but the last reached
// SegmentSize before the roll.
func TestSegmentRollsAtSegmentSize(t *testing.T) {
	const (
		segSize = 4 << 10
		writers = 8
		each    = 60
	)
	ctx := context.Background()
	mem := memfs.New()
	var mu sync.Mutex
	var maxBatch, total int
	s, err := filestore.Open(ctx, filestore.Options{FS: mem, Partitions: parts, SegmentSize: segSize,
		OnBatch: func(_, bytes int, _ time.Duration, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				maxBatch = max(maxBatch, bytes)
				total += bytes
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(1)
	want := map[string]string{}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				k, v := fmt.Sprintf("w%d-%03d", w, i), strings.Repeat(string(rune('a'+w)), 150)
				if err := s.Store(ctx, m.next(k, []byte(v), false)); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				want[k] = v
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	logs := logNames(t, mem)
	var onDisk int64
	for _, fi := range logs {
		onDisk += fi.Size
	}
	t.Logf("%d bytes of batches (largest %d) in %d segments of %d bytes", total, maxBatch, len(logs), segSize)
	if least := total / (segSize + maxBatch); len(logs) < max(least, 2) {
		t.Fatalf("%d bytes of records in %d segments, want at least %d: the log did not roll", total, len(logs), max(least, 2))
	}
	if onDisk < int64(total) {
		t.Fatalf("segments hold %d bytes, fewer than the %d bytes of batches written", onDisk, total)
	}
	for i, fi := range logs {
		if fi.Size >= int64(segSize+maxBatch) {
			t.Errorf("segment %s has %d bytes, more than SegmentSize %d plus one batch (%d)", fi.Name, fi.Size, segSize, maxBatch)
		}
		if i < len(logs)-1 && fi.Size < segSize {
			t.Errorf("segment %s rolled at %d bytes, before SegmentSize %d", fi.Name, fi.Size, segSize)
		}
	}
	s2, err := filestore.Open(ctx, filestore.Options{FS: mem, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	expectSame(t, loadAll(t, s2), want)
}
