package bench_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage/stowage/bench"
	"github.com/stowage/stowage/fsbackend"
)

var loadEntries = flag.Int("load-entries", 200_000, "entries for BenchmarkEagerLoad")

// BenchmarkEagerLoad times a node's start until its EAGER map of
// -load-entries entries (256 B values, written once) is loaded, from a
// fresh copy (hard links) of the files each time, so that what a load
// writes (epoch starts, snapshots) never reaches the next one.
func BenchmarkEagerLoad(b *testing.B) {
	ctx := context.Background()
	golden := b.TempDir()
	if err := bench.WriteLoadFiles(ctx, bench.LocalTarget(golden), *loadEntries, 256); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "ns")
		if err := bench.LinkTree(golden, dir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := bench.EagerLoad(ctx, bench.LocalTarget(dir), *loadEntries); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(*loadEntries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// TestRawReadFSParallelReadsEveryFile: the parallel raw read reads the
// same bytes as the sequential one, whatever the files at once.
func TestRawReadFSParallelReadsEveryFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f, err := fsbackend.Open(ctx, fsbackend.Properties{"storage.type": "hdfs", "fs.defaultFS": "file:///"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sub, err := fsbackend.Sub(f, strings.TrimPrefix(dir, "/"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 9 {
		if err := fsbackend.WriteFileAtomic(ctx, sub, fmt.Sprintf("d%d/f%d", i%3, i), ".tmp", bytes.Repeat([]byte{byte(i)}, 1000*i+1)); err != nil {
			t.Fatal(err)
		}
	}
	want, _, err := bench.RawReadFS(ctx, sub)
	if err != nil || want != 9*1+1000*36 {
		t.Fatalf("sequential raw read: %d bytes, %v", want, err)
	}
	for _, n := range []int{1, 4, 16} {
		if got, _, err := bench.RawReadFSParallel(ctx, sub, n); err != nil || got != want {
			t.Errorf("%d at once: %d bytes (%v), want %d", n, got, err, want)
		}
	}
}
