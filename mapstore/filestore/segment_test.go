package filestore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

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
