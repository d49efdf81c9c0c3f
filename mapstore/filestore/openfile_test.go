package filestore_test

import (
	"context"
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

// syncOpenFS shows memfs as a back end with SyncOpen instead of
// DurableAppend (as HDFS is), and counts the log files created, synced
// and closed.
type syncOpenFS struct {
	fsbackend.FS
	creates, syncs, closes atomic.Int64
}

func (f *syncOpenFS) Capabilities() fsbackend.Capabilities {
	return fsbackend.Capabilities{SyncOpen: true, AtomicRename: true, ConditionalCreate: true}
}

func (f *syncOpenFS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	w, err := f.FS.Create(ctx, name)
	if err != nil || !strings.Contains(name, "/log/") {
		return w, err
	}
	f.creates.Add(1)
	return &syncOpenWriter{Writer: w, f: f}, nil
}

type syncOpenWriter struct {
	fsbackend.Writer
	f *syncOpenFS
}

func (w *syncOpenWriter) Sync() error {
	w.f.syncs.Add(1)
	return w.Writer.Sync()
}

func (w *syncOpenWriter) Close() error {
	w.f.closes.Add(1)
	return w.Writer.Close()
}

// Truncate hides memfs's: HDFS writers cannot truncate.
func (w *syncOpenWriter) Truncate(int64) error { return fsbackend.ErrUnsupported }

func openPut(ctx context.Context, s *filestore.Store, key string, seq uint64, value []byte) error {
	p := keyhash.Partition([]byte(key), parts)
	return s.Store(ctx, mapstore.Record{Partition: p, Key: []byte(key), Value: value, Version: mapstore.Version{Epoch: 1, Seq: seq}})
}

// On a SyncOpen back end one writer's puts are appended to the open log
// file of their partition's lane, one Sync each; the files are closed
// after a second without writes, and the next put opens a new one. A
// batch larger than what an open file takes is a batch file of its own.
func TestOpenFileLoneWriter(t *testing.T) {
	f := &syncOpenFS{FS: memfs.New()}
	ctx := context.Background()
	s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var seq uint64
	lanes := map[int]bool{}
	for i := range 50 {
		seq++
		key := fmt.Sprint("k", i)
		lanes[keyhash.Partition([]byte(key), parts)%filestore.DefaultOpenFiles] = true
		if err := openPut(ctx, s, key, seq, []byte("value")); err != nil {
			t.Fatal(err)
		}
	}
	if c, y, cl := f.creates.Load(), f.syncs.Load(), f.closes.Load(); c != int64(len(lanes)) || y != 50 || cl != 0 {
		t.Fatalf("50 puts of one writer: %d log files created, %d syncs, %d closed; want %d (one per lane used), 50, 0", c, y, cl, len(lanes))
	}
	// Idle: the open files are closed.
	opened := f.creates.Load()
	for end := time.Now().Add(10 * time.Second); f.closes.Load() < opened && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
	}
	if cl := f.closes.Load(); cl != opened {
		t.Fatalf("after the writer went idle: %d log files closed, want %d", cl, opened)
	}
	seq++
	if err := openPut(ctx, s, "after-idle", seq, []byte("value")); err != nil {
		t.Fatal(err)
	}
	if c := f.creates.Load(); c != opened+1 {
		t.Fatalf("a put after the open files were closed: %d log files created in all, want %d", c, opened+1)
	}
	// A batch of more than 256 KiB goes to a batch file, closed at once,
	// not synced.
	syncs := f.syncs.Load()
	var big []mapstore.Record
	for i := range 40 {
		seq++
		key := fmt.Sprint("big", i)
		big = append(big, mapstore.Record{Partition: keyhash.Partition([]byte(key), parts), Key: []byte(key), Value: make([]byte, 8<<10), Version: mapstore.Version{Epoch: 1, Seq: seq}})
	}
	if err := s.StoreAll(ctx, big); err != nil {
		t.Fatal(err)
	}
	if c, y := f.creates.Load(), f.syncs.Load(); c != opened+2 || y != syncs {
		t.Fatalf("a 320 KiB batch: %d log files created in all, %d syncs more; want %d, 0", c, y-syncs, opened+2)
	}
}

// Many writers at once share the open files' syncs; everything
// acknowledged loads back after the store is closed and opened again.
func TestOpenFileManyWriters(t *testing.T) {
	f := &syncOpenFS{FS: memfs.New()}
	ctx := context.Background()
	s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seqs := make([]uint64, parts)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := range 30 {
				key := fmt.Sprintf("w%d-%d", w, i)
				p := keyhash.Partition([]byte(key), parts)
				mu.Lock()
				seqs[p]++
				r := mapstore.Record{Partition: p, Key: []byte(key), Value: []byte(key), Version: mapstore.Version{Epoch: 1, Seq: seqs[p]}}
				mu.Unlock()
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
	s, err = filestore.Open(ctx, filestore.Options{FS: f, Partitions: parts})
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
	if n != 16*30 {
		t.Fatalf("loaded %d entries, want %d", n, 16*30)
	}
	if y, c := f.syncs.Load(), f.creates.Load(); y == 0 || c > filestore.DefaultOpenFiles {
		t.Fatalf("16 writers: %d syncs, %d log files created; want the open files synced, one per lane at most", y, c)
	}
}

// A read of storage for a partition the open file holds records of
// finishes the open file first (elsewhere than memfs, readers see its
// records only then); a read of other partitions leaves it open.
func TestOpenFileFinishedBeforeReread(t *testing.T) {
	f := &syncOpenFS{FS: memfs.New()}
	ctx := context.Background()
	s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	keys := keysOf(2, 3, "reread")
	for i, k := range keys {
		if err := openPut(ctx, s, k, uint64(i+1), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.LoadAll(ctx, [][]byte{[]byte(keysOf(5, 1, "other")[0])}); err != nil {
		t.Fatal(err)
	}
	if cl := f.closes.Load(); cl != 0 {
		t.Fatalf("a read of another partition closed %d log files, want 0", cl)
	}
	got, err := s.LoadAll(ctx, [][]byte{[]byte(keys[0]), []byte(keys[2])})
	if err != nil {
		t.Fatal(err)
	}
	if cl := f.closes.Load(); cl != 1 {
		t.Fatalf("a read of the open file's partition closed %d log files, want 1", cl)
	}
	if len(got) != 2 {
		t.Fatalf("LoadAll found %d of 2 keys", len(got))
	}
}
