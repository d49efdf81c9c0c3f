package filestore_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
)

// openDir opens a store of parts partitions on a local directory.
func openDir(t *testing.T, dir string, parts int) *filestore.Store {
	t.Helper()
	f, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := filestore.Open(context.Background(), filestore.Options{FS: f, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// loadRecords returns every live record of the store, by key.
func loadRecords(t *testing.T, s *filestore.Store) map[string]mapstore.Record {
	t.Helper()
	out := map[string]mapstore.Record{}
	for p := 0; p < s.Partitions(); p++ {
		err := s.LoadPartition(context.Background(), p, func(r mapstore.Record) error {
			out[string(r.Key)] = r
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestGoldenStoreWithoutExpiryLoads reads a map directory written by the
// store before entries had deadlines (testdata/mapstore/v1-no-expiry: a
// log with puts and deletes, and snapshots of every partition): every
// entry comes back, none with a deadline.
func TestGoldenStoreWithoutExpiryLoads(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../testdata/mapstore/v1-no-expiry")); err != nil {
		t.Fatal(err)
	}
	s := openDir(t, dir, 7)
	defer s.Close()
	got := loadRecords(t, s)
	want := map[string]string{}
	for i := 0; i < 25; i++ {
		v := fmt.Sprintf("state-%02d", i)
		if i >= 15 {
			v += "-b"
		}
		want[fmt.Sprintf("job-%02d", i)] = v
	}
	delete(want, "job-03")
	delete(want, "job-07")
	if len(got) != len(want) {
		t.Fatalf("loaded %d entries, want %d", len(got), len(want))
	}
	for k, v := range want {
		r, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s missing", k)
		case string(r.Value) != v:
			t.Errorf("%s = %q, want %q", k, r.Value, v)
		case r.Expires != 0:
			t.Errorf("%s has deadline %d, want none", k, r.Expires)
		}
	}
}

// TestExpiresSurvivesLogAndSnapshot stores entries with and without
// deadlines, reopens (from the log), compacts (into a snapshot) and
// reopens again: each entry keeps its deadline both ways.
func TestExpiresSurvivesLogAndSnapshot(t *testing.T) {
	dir := t.TempDir()
	const parts = 5
	m := newBenchModel(parts)
	want := map[string]int64{}
	s := openDir(t, dir, parts)
	for i := 0; i < 40; i++ {
		k := fmt.Sprintf("k%02d", i)
		r := m.put([]byte(k), []byte("v-"+k))
		if i%2 == 0 {
			r.Expires = 1_700_000_000_000_000_000 + int64(i)
			m.mu.Lock()
			m.live[r.Partition][k] = r
			m.mu.Unlock()
		}
		want[k] = r.Expires
		if err := s.Store(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, s *filestore.Store) {
		t.Helper()
		got := loadRecords(t, s)
		if len(got) != len(want) {
			t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
		}
		for k, exp := range want {
			if got[k].Expires != exp {
				t.Errorf("%s: %s expires %d, want %d", what, k, got[k].Expires, exp)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openDir(t, dir, parts)
	check("from the log", s)
	for p := 0; p < parts; p++ {
		s.Acquire(p)
	}
	s.SetSnapshotSource(m.source)
	if err := s.ForceCompact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openDir(t, dir, parts)
	defer s.Close()
	check("from snapshots", s)
}
