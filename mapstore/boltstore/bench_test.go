package boltstore_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/boltstore"
	"github.com/stowage/stowage/partition"
)

const (
	benchWriters   = 64
	benchValueSize = 256
)

// parallel64 runs fn from 64 goroutines (whatever GOMAXPROCS is), each
// with its own writer number, and reports puts/s.
func parallel64(b *testing.B, fn func(w int, i int) error) {
	b.Helper()
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((benchWriters + procs - 1) / procs)
	var writer, next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		w := int(writer.Add(1))
		for pb.Next() {
			if err := fn(w, int(next.Add(1))); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "puts/s")
}

// BenchmarkStore is Store from 64 goroutines, 256 B values.
func BenchmarkStore(b *testing.B) {
	b.Run("writers=64", func(b *testing.B) {
		s, err := boltstore.Open(filepath.Join(b.TempDir(), "maps.db"), boltstore.Options{MapName: "m"})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		value := make([]byte, benchValueSize)
		parallel64(b, func(w, i int) error {
			key := []byte("job-" + strconv.Itoa(i))
			return s.Store(b.Context(), mapstore.Record{Partition: partition.Of(key, partition.DefaultCount),
				Version: mapstore.Version{Epoch: 1, Seq: uint64(i)}, Key: key, Value: value})
		})
	})
}

// BenchmarkBolt is plain bbolt, the reference: DB.Batch with its default
// settings, and one put per DB.Update, both from 64 goroutines.
func BenchmarkBolt(b *testing.B) {
	for _, batch := range []bool{true, false} {
		name := "Batch/writers=64"
		if !batch {
			name = "UpdatePerPut/writers=64"
		}
		b.Run(name, func(b *testing.B) {
			db, err := bolt.Open(filepath.Join(b.TempDir(), "bench.db"), 0o600, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			bucket := []byte("bench")
			if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(bucket); return err }); err != nil {
				b.Fatal(err)
			}
			value := make([]byte, benchValueSize)
			parallel64(b, func(w, i int) error {
				key := []byte("job-" + strconv.Itoa(i))
				put := func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put(key, value) }
				if batch {
					return db.Batch(put)
				}
				return db.Update(put)
			})
		})
	}
}

// BenchmarkBenchPuts runs the helper `stowage bench` calls, 64 writers.
func BenchmarkBenchPuts(b *testing.B) {
	for _, batch := range []bool{true, false} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) {
			var rate float64
			for i := 0; i < b.N; i++ {
				r, err := boltstore.BenchPuts(b.Context(), filepath.Join(b.TempDir(), "bench.db"), benchWriters, 8, benchValueSize, batch)
				if err != nil {
					b.Fatal(err)
				}
				rate += r
			}
			b.ReportMetric(rate/float64(b.N), "puts/s")
		})
	}
}

// BenchmarkLoadPartition is an EAGER load: every partition of a map of
// 100k entries of 256 B, reported as entries/s.
func BenchmarkLoadPartition(b *testing.B) {
	const entries = 100000
	s, err := boltstore.Open(filepath.Join(b.TempDir(), "maps.db"), boltstore.Options{MapName: "m"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	value := make([]byte, benchValueSize)
	rs := make([]mapstore.Record, 0, 10000)
	for i := 0; i < entries; i++ {
		key := []byte("job-" + strconv.Itoa(i))
		rs = append(rs, mapstore.Record{Partition: partition.Of(key, partition.DefaultCount), Version: mapstore.Version{Epoch: 1, Seq: uint64(i)}, Key: key, Value: value})
		if len(rs) == cap(rs) {
			if err := s.StoreAll(b.Context(), rs); err != nil {
				b.Fatal(err)
			}
			rs = make([]mapstore.Record, 0, 10000)
		}
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		n := 0
		for p := 0; p < partition.DefaultCount; p++ {
			if err := s.LoadPartition(b.Context(), p, func(mapstore.Record) error { n++; return nil }); err != nil {
				b.Fatal(err)
			}
		}
		if n != entries {
			b.Fatalf("loaded %d entries, want %d", n, entries)
		}
	}
	b.ReportMetric(float64(b.N*entries)/time.Since(start).Seconds(), "entries/s")
}
