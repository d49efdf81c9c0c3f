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
