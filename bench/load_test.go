package bench_test

import (
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/stowage/stowage/bench"
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
