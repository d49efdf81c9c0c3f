package boltstore_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/boltstore"
)

// TestExpiresRoundTrip stores entries with and without deadlines, closes
// and reopens the file: Load, LoadAll and LoadPartition give each entry
// its deadline back, and values stay whole.
func TestExpiresRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "maps.db")
	const parts = 5
	s := open(t, path, boltstore.Options{MapName: "m", Partitions: parts})
	var rs []mapstore.Record
	for i := 0; i < 20; i++ {
		r := rec(fmt.Sprint("key-", i), fmt.Sprint("value-", i), parts, uint64(i+1))
		if i%2 == 1 {
			r.Expires = 1_767_225_600_000_000_000 + int64(i)
		}
		rs = append(rs, r)
	}
	if err := errors.Join(s.StoreAll(t.Context(), rs), s.Close()); err != nil {
		t.Fatal(err)
	}
	s = open(t, path, boltstore.Options{MapName: "m", Partitions: parts})
	defer s.Close()
	got := map[string]mapstore.Record{}
	for p := 0; p < parts; p++ {
		if err := s.LoadPartition(t.Context(), p, func(r mapstore.Record) error { got[string(r.Key)] = r; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range rs {
		g := got[string(w.Key)]
		if g.Expires != w.Expires || string(g.Value) != string(w.Value) {
			t.Errorf("%s: got %q expiring %d, want %q expiring %d", w.Key, g.Value, g.Expires, w.Value, w.Expires)
		}
		one, ok, err := s.Load(t.Context(), w.Key)
		if err != nil || !ok || one.Expires != w.Expires {
			t.Errorf("Load %s: %v %v expires %d, want %d", w.Key, ok, err, one.Expires, w.Expires)
		}
	}
}
