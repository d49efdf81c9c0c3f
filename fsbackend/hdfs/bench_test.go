package hdfs_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

// BenchmarkCreateWriteClose measures the durable write of one 64 KiB file
// (create, write, close with the pipeline acknowledged), the map store's
// unit of work on HDFS.
func BenchmarkCreateWriteClose(b *testing.B) {
	need(b, envHDFS)
	f := openRaw(b, clusterProps())
	dir := uniqueDir(b)
	sub, err := fsbackend.Sub(f, dir)
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 64<<10)
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := fsbackend.WriteFile(ctx, sub, fmt.Sprintf("%08d", i), data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteSync measures a 256-byte write made durable by Sync (an
// hsync of the pipeline) on a file kept open: the map store's unit of
// work for a lone writer on HDFS.
func BenchmarkWriteSync(b *testing.B) {
	need(b, envHDFS)
	f := openRaw(b, clusterProps())
	sub, err := fsbackend.Sub(f, uniqueDir(b))
	if err != nil {
		b.Fatal(err)
	}
	w, err := sub.Create(context.Background(), "open")
	if err != nil {
		b.Fatal(err)
	}
	defer w.Abort()
	data := make([]byte, 256)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := w.Write(data); err != nil {
			b.Fatal(err)
		}
		if err := w.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}
