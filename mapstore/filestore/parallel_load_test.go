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
	_ "github.com/stowage/stowage/fsbackend/oss" // the object store of these tests
	"github.com/stowage/stowage/internal/latency"
	"github.com/stowage/stowage/internal/testutil/ossserver"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
)

// listCounter counts the listings the store asks its back end for. (The
// server may see a listing twice: the client library resends a request
// whose connection broke.)
type listCounter struct {
	fsbackend.FS
	lists atomic.Int64
}

func (c *listCounter) List(ctx context.Context, dir string) ([]fsbackend.FileInfo, error) {
	c.lists.Add(1)
	return c.FS.List(ctx, dir)
}

// objectStore serves an OSS bucket on 127.0.0.1 and opens a back end on
// it; every request to it passes through the server's latency model.
func objectStore(t testing.TB) (*ossserver.Server, *listCounter) {
	t.Helper()
	const id, secret, bucket = "LTAI5tLoadTestKey", "load-test-secret", "load-test"
	srv := ossserver.New(ossserver.Options{Credentials: []ossserver.Credential{{AccessKeyID: id, AccessKeySecret: secret}}, Buckets: []string{bucket}})
	t.Cleanup(srv.Close)
	f, err := fsbackend.Open(context.Background(), fsbackend.Properties{
		"storage.type": "oss", "oss.bucket": "oss://" + bucket + "/maps/m", "fs.oss.endpoint": srv.Endpoint(),
		"fs.oss.accessKeyId": id, "fs.oss.accessKeySecret": secret, "disable.cache": "true",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return srv, &listCounter{FS: f}
}

// writeSmallFiles writes n batches of per records, each one file on an
// object store, and returns what a load must give.
func writeSmallFiles(t testing.TB, s *filestore.Store, m *benchModel, n, per int) map[string]string {
	t.Helper()
	want := map[string]string{}
	for b := 0; b < n; b++ {
		recs := make([]mapstore.Record, 0, per)
		for i := 0; i < per; i++ {
			k, v := fmt.Sprintf("key-%d-%d", b, i), fmt.Sprintf("value-%d", b*per+i)
			recs = append(recs, m.put([]byte(k), []byte(v)))
			want[k] = v
		}
		if err := s.StoreAll(context.Background(), recs); err != nil {
			t.Fatal(err)
		}
	}
	return want
}

// loadKeys loads partitions ps with ReplayPartitionKeys from workers
// goroutines (as a member's load workers do) into got.
func loadKeys(t testing.TB, s *filestore.Store, ps []int, workers int, got map[string]string) {
	t.Helper()
	loadKeysScribbling(t, s, ps, workers, got, false)
}

// loadKeysScribbling is loadKeys that, with scribble, overwrites every
// value it was given once it copied it, as the owner of the bytes may.
func loadKeysScribbling(t testing.TB, s *filestore.Store, ps []int, workers int, got map[string]string, scribble bool) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				err := s.ReplayPartitionKeys(context.Background(), p, nil, func(k string, r mapstore.Record) error {
					mu.Lock()
					defer mu.Unlock()
					if r.Deleted {
						delete(got, k)
					} else {
						got[k] = string(r.Value)
					}
					if scribble {
						for i := range r.Value {
							r.Value[i] = 'X'
						}
					}
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for _, p := range ps {
		next <- p
	}
	close(next)
	wg.Wait()
}

func allParts(n int) []int {
	ps := make([]int, n)
	for i := range ps {
		ps[i] = i
	}
	return ps
}

func countFiles(t *testing.T, f fsbackend.FS, suffix string) int {
	t.Helper()
	list, err := f.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fi := range list {
		if strings.HasSuffix(fi.Name, suffix) {
			n++
		}
	}
	return n
}

// TestLoadReadsInParallelWithOneListing opens a map of many small files
// on an object store that answers every request after 10 ms and loads
// every partition one after another: the server sees several reads in
// flight at once (Open reads the files in parallel), and the store lists
// the map once. Then the same with snapshots, which compaction writes on
// the object store as on local disk: they are read ahead in the
// background, in parallel too.
func TestLoadReadsInParallelWithOneListing(t *testing.T) {
	const partitions = 16
	srv, f := objectStore(t)
	ctx := context.Background()
	m := newBenchModel(partitions)
	s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: partitions})
	if err != nil {
		t.Fatal(err)
	}
	want := writeSmallFiles(t, s, m, 40, 8)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	logs := countFiles(t, f, ".log")
	if logs < 40 {
		t.Fatalf("%d log files written, want one per batch (40)", logs)
	}

	lat := srv.Latency()
	load := func(what string) {
		t.Helper()
		lat.SetDelay(10 * time.Millisecond)
		defer lat.SetDelay(0)
		lat.Reset()
		f.lists.Store(0)
		s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: partitions})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		got := map[string]string{}
		loadKeys(t, s, allParts(partitions), 1, got)
		expectSame(t, got, want)
		reads, lists := lat.KindStats(latency.Get), f.lists.Load()
		t.Logf("%s: %d reads, at most %d in flight; %d listings", what, reads.Served, reads.MaxInFlight, lists)
		if reads.MaxInFlight < 2 {
			t.Errorf("%s: at most %d read in flight at once at the server, want several", what, reads.MaxInFlight)
		}
		if lists != 1 {
			t.Errorf("%s: the map was listed %d times, want once", what, lists)
		}
	}
	load(fmt.Sprintf("%d small log files", logs))

	s, err = filestore.Open(ctx, filestore.Options{FS: f, Partitions: partitions})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	loadKeys(t, s, allParts(partitions), 4, got)
	s.SetSnapshotSource(m.source)
	if err := s.ForceCompact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if snaps, left := countFiles(t, f, ".snap"), countFiles(t, f, ".log"); snaps < partitions || left >= logs {
		t.Fatalf("after compaction on the object store: %d snapshots, %d of %d log files left; want a snapshot per partition and the covered log files gone", snaps, left, logs)
	}
	load("snapshots")
}

// TestRereadsShareListingAndReads releases every partition of a loaded
// map (a member that lost them) and loads them again from several
// goroutines at once, as a member does when they come back to it: the
// loads that ask at the same time share a listing, and each log file is
// read once for all of them, not once per partition.
func TestRereadsShareListingAndReads(t *testing.T) {
	const partitions, workers = 32, 8
	srv, f := objectStore(t)
	ctx := context.Background()
	m := newBenchModel(partitions)
	s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: partitions})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := writeSmallFiles(t, s, m, 24, 16)
	got := map[string]string{}
	loadKeys(t, s, allParts(partitions), workers, got)
	for p := 0; p < partitions; p++ {
		s.Release(p)
	}
	logs := countFiles(t, f, ".log")

	lat := srv.Latency()
	lat.SetDelay(5 * time.Millisecond)
	defer lat.SetDelay(0)
	lat.Reset()
	f.lists.Store(0)
	got = map[string]string{}
	loadKeysScribbling(t, s, allParts(partitions), workers, got, true)
	expectSame(t, got, want)
	reads, lists := lat.KindStats(latency.Get), f.lists.Load()
	t.Logf("%d partitions reloaded by %d workers: %d listings, %d reads (HEAD and GET) of %d log files, at most %d in flight", partitions, workers, lists, reads.Served, logs, reads.MaxInFlight)
	if lists > partitions/2 {
		t.Errorf("%d listings to reload %d partitions, want them shared", lists, partitions)
	}
	// An object is read with a HEAD and a GET (a few more: resent).
	if reads.Served > int64(2*logs+logs/4) {
		t.Errorf("%d reads for %d log files: files read again for each partition", reads.Served, logs)
	}

	// Loaded again, a partition gets records of its own: what the
	// previous load handed out was changed by its caller.
	for p := 0; p < partitions; p++ {
		s.Release(p)
	}
	got = map[string]string{}
	loadKeys(t, s, allParts(partitions), workers, got)
	expectSame(t, got, want)
}

// BenchmarkLoadObjectStore times Open and the load of every partition
// (by 4 workers, as a 2-processor member loads) of a map of 250 small log
// files of 32 records of 256 B (files=log), or of the same compacted
// into a snapshot per partition (files=snapshots), on an object store that
// answers every request after 20 ms, as a real one does. It reports
// entries/s.
func BenchmarkLoadObjectStore(b *testing.B) {
	b.Run("files=log", func(b *testing.B) { benchmarkLoadObjectStore(b, false) })
	b.Run("files=snapshots", func(b *testing.B) { benchmarkLoadObjectStore(b, true) })
}

func benchmarkLoadObjectStore(b *testing.B, compacted bool) {
	const partitions = 271
	srv, f := objectStore(b)
	ctx := context.Background()
	m := newBenchModel(partitions)
	s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: partitions})
	if err != nil {
		b.Fatal(err)
	}
	value := strings.Repeat("v", 256)
	want := 0
	for i := 0; i < 250; i++ {
		recs := make([]mapstore.Record, 0, 32)
		for j := 0; j < 32; j++ {
			recs = append(recs, m.put([]byte(fmt.Sprintf("job-%d-key-%d", j, i*32+j)), []byte(value)))
			want++
		}
		if err := s.StoreAll(ctx, recs); err != nil {
			b.Fatal(err)
		}
	}
	if compacted {
		loadKeys(b, s, allParts(partitions), 4, map[string]string{})
		s.SetSnapshotSource(m.source)
		if err := s.ForceCompact(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	srv.Latency().SetDelay(20 * time.Millisecond)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: partitions})
		if err != nil {
			b.Fatal(err)
		}
		got := map[string]string{}
		loadKeys(b, s, allParts(partitions), 4, got)
		b.StopTimer()
		if len(got) != want {
			b.Fatalf("loaded %d entries, want %d", len(got), want)
		}
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(want)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}
