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
	"github.com/stowage/stowage/serde/keyhash"
)

const (
	benchWriters   = 64
	benchValueSize = 256
)

// parallel runs fn from about writers goroutines (a multiple of
// GOMAXPROCS), each with its own writer number, and reports puts/s.
func parallel(b *testing.B, writers int, fn func(w int, i int) error) {
	b.Helper()
	if writers == 1 {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			if err := fn(0, i); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "puts/s")
		return
	}
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((writers + procs - 1) / procs)
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

// BenchmarkStore is Store from 64 goroutines and from one, 256 B values.
func BenchmarkStore(b *testing.B) {
	for _, writers := range []int{benchWriters, 1} {
		b.Run(fmt.Sprint("writers=", writers), func(b *testing.B) {
			s, err := boltstore.Open(filepath.Join(b.TempDir(), "maps.db"), boltstore.Options{MapName: "m"})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			value := make([]byte, benchValueSize)
			parallel(b, writers, func(w, i int) error {
				key := []byte("job-" + strconv.Itoa(i))
				return s.Store(b.Context(), mapstore.Record{Partition: keyhash.Partition(key, keyhash.DefaultPartitions),
					Version: mapstore.Version{Epoch: 1, Seq: uint64(i)}, Key: key, Value: value})
			})
		})
	}
}

// BenchmarkBolt is plain bbolt, the reference: DB.Batch with its default
// settings, and one put per DB.Update, from 64 goroutines and from one.
func BenchmarkBolt(b *testing.B) {
	for _, writers := range []int{benchWriters, 1} {
		for _, batch := range []bool{true, false} {
			name := fmt.Sprint("Batch/writers=", writers)
			if !batch {
				name = fmt.Sprint("UpdatePerPut/writers=", writers)
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
				parallel(b, writers, func(w, i int) error {
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
		rs = append(rs, mapstore.Record{Partition: keyhash.Partition(key, keyhash.DefaultPartitions), Version: mapstore.Version{Epoch: 1, Seq: uint64(i)}, Key: key, Value: value})
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
		for p := 0; p < keyhash.DefaultPartitions; p++ {
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
