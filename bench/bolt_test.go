package bench_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage/stowage/bench"
)

func TestBoltPuts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.db")
	for _, batch := range []bool{true, false} {
		rate, err := bench.BoltPuts(t.Context(), path, 4, 10, 256, batch)
		if err != nil || rate <= 0 {
			t.Fatalf("BoltPuts(batch %v) = %v, %v", batch, rate, err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("bench file left behind: %v", err)
		}
	}
	if err := os.WriteFile(path, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := bench.BoltPuts(t.Context(), path, 1, 1, 1, true); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("BoltPuts on an existing file: %v, want a refusal naming it", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "precious" {
		t.Fatalf("existing file changed: %q, %v", b, err)
	}
}

// BenchmarkBoltPuts runs the bbolt reference `stowage bench` calls, 64
// writers of 256 B values.
func BenchmarkBoltPuts(b *testing.B) {
	for _, batch := range []bool{true, false} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) {
			var rate float64
			for i := 0; i < b.N; i++ {
				r, err := bench.BoltPuts(b.Context(), filepath.Join(b.TempDir(), "bench.db"), 64, 8, 256, batch)
				if err != nil {
					b.Fatal(err)
				}
				rate += r
			}
			b.ReportMetric(rate/float64(b.N), "puts/s")
		})
	}
}
