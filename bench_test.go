package stowage_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/serde"
)

// BenchmarkPutPersisted measures write-through Put of 256 B values from
// parallel goroutines (b.SetParallelism(32) per CPU) on local disk.
func BenchmarkPutPersisted(b *testing.B) {
	ctx := context.Background()
	n, err := stowage.Open(ctx, stowage.Options{Config: persisted(b, b.TempDir(), "")})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	m, _ := stowage.GetMap(ctx, n, "engine_bench", serde.String(), serde.Bytes())
	val := make([]byte, 256)
	var id atomic.Int64
	b.SetParallelism(32)
	b.SetBytes(256)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := id.Add(1)
		for i := 0; pb.Next(); i++ {
			if err := m.Put(ctx, fmt.Sprintf("w%d-%d", w, i%1000), val); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkGet measures reads of a loaded map.
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	n, _ := stowage.Open(ctx, stowage.Options{})
	defer n.Close()
	m, _ := stowage.GetMap(ctx, n, "mem", serde.String(), serde.Bytes())
	for i := 0; i < 1000; i++ {
		m.Put(ctx, fmt.Sprint("k", i), []byte("v"))
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			m.Get(ctx, fmt.Sprint("k", i%1000))
		}
	})
}

// benchBulkMap opens a member alone with a persisted map for the bulk
// benchmarks, and 1,000 entries of 256 B values.
func benchBulkMap(b *testing.B) (*stowage.Map[string, []byte], []stowage.Entry[string, []byte], func()) {
	ctx := context.Background()
	n, err := stowage.Open(ctx, stowage.Options{Config: persisted(b, b.TempDir(), "")})
	if err != nil {
		b.Fatal(err)
	}
	m, _ := stowage.GetMap(ctx, n, "engine_bulk", serde.String(), serde.Bytes())
	val := make([]byte, 256)
	es := make([]stowage.Entry[string, []byte], 1000)
	for i := range es {
		es[i] = stowage.Entry[string, []byte]{Key: fmt.Sprint("k", i), Value: val}
	}
	return m, es, func() { n.Close() }
}

// BenchmarkPutAll1000 measures one PutAll of 1,000 entries (write-through,
// local disk), against BenchmarkPut1000 below.
func BenchmarkPutAll1000(b *testing.B) {
	m, es, done := benchBulkMap(b)
	defer done()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.PutAll(context.Background(), es); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPut1000 measures 1,000 single Puts one after the other.
func BenchmarkPut1000(b *testing.B) {
	m, es, done := benchBulkMap(b)
	defer done()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, e := range es {
			if err := m.Put(context.Background(), e.Key, e.Value); err != nil {
				b.Fatal(err)
			}
		}
	}
}
