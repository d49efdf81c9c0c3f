package gcs_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend/gcs"
	"github.com/stowage/stowage/internal/latency"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/serde/keyhash"
)

// TestMapLoadsInParallel writes a map of small files through the file
// map store on GCS, then, with 5 ms added to every request, loads it one
// partition after another: the client had several reads in flight at
// once, and every entry loads.
func TestMapLoadsInParallel(t *testing.T) {
	const partitions = 8
	fx := newFixture(t, gcs.RetryPolicy{}, "maps/m")
	ctx := context.Background()
	s, err := filestore.Open(ctx, filestore.Options{FS: fx.fs, Partitions: partitions})
	if err != nil {
		t.Fatal(err)
	}
	seq := make([]uint64, partitions)
	want := map[string]string{}
	for b := 0; b < 24; b++ {
		var recs []mapstore.Record
		for i := 0; i < 8; i++ {
			k := fmt.Sprintf("key-%d-%d", b, i)
			p := keyhash.Partition([]byte(k), partitions)
			seq[p]++
			want[k] = fmt.Sprint("value-", b, "-", i)
			recs = append(recs, mapstore.Record{Partition: p, Version: mapstore.Version{Epoch: 1, Seq: seq[p]}, Key: []byte(k), Value: []byte(want[k])})
		}
		if err := s.StoreAll(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	fx.lat.SetDelay(5 * time.Millisecond)
	fx.lat.Reset()
	s, err = filestore.Open(ctx, filestore.Options{FS: fx.fs, Partitions: partitions})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := map[string]string{}
	for p := 0; p < partitions; p++ {
		err := s.ReplayPartitionKeys(ctx, p, nil, func(k string, r mapstore.Record) error {
			got[k] = string(r.Value)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("loaded %d entries, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("key %q = %q, want %q", k, got[k], v)
		}
	}
	reads := fx.lat.KindStats(latency.Get)
	t.Logf("%d reads, at most %d in flight; %d listings", reads.Served, reads.MaxInFlight, fx.lat.KindStats(latency.List).Served)
	if reads.MaxInFlight < 2 {
		t.Errorf("at most %d read in flight at once while 24 files loaded, want several", reads.MaxInFlight)
	}
}
