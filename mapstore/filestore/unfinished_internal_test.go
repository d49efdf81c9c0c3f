package filestore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/keyhash"
)

// Another run's segment read while that run writes into the zeros ahead
// of its records keeps its size as it takes more: once the run ended,
// refresh reads it again whatever its size, so that what the store knows
// of the file (its highest version of each partition, which decides when
// it may be collected) includes the records written after the first read.
// A reread of partitions does not reuse such a read either.
func TestUnfinishedFileIsReadAgain(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	live := map[string]bool{}
	isLive := func(run string) bool {
		mu.Lock()
		defer mu.Unlock()
		return live[run]
	}
	open := func(run string) *Store {
		mu.Lock()
		live[run] = true
		mu.Unlock()
		s, err := Open(ctx, Options{FS: f, Partitions: 2, RunID: run, IsLive: isLive})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := open("a")
	defer a.Close()
	// keys[p][i] is a key of partition p.
	var keys [2][]string
	for i := 0; len(keys[0]) < 20 || len(keys[1]) < 20; i++ {
		k := fmt.Sprint("k", i)
		p := keyhash.Partition([]byte(k), 2)
		keys[p] = append(keys[p], k)
	}
	// put writes the seq-th key of each partition, at version seq.
	put := func(seq uint64) {
		for p := range 2 {
			r := mapstore.Record{Partition: p, Version: mapstore.Version{Epoch: 1, Seq: seq}, Key: []byte(keys[p][seq-1]), Value: []byte("value")}
			if err := a.Store(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	for seq := uint64(1); seq <= 10; seq++ {
		put(seq)
	}
	b := open("b")
	defer b.Close()
	b.Release(0)
	b.Release(1)
	segs, err := filepath.Glob(filepath.Join(dir, "*", "log", "a", "*.log"))
	if err != nil || len(segs) != 1 {
		t.Fatalf("want run a's one segment, have %v (%v)", segs, err)
	}
	size := func() int64 {
		st, err := os.Stat(segs[0])
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	before := size()
	// A reread of partition 0 now reads the file and keeps the read for
	// a reread of partition 1.
	if _, _, err := b.Load(ctx, []byte(keys[0][0])); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(11); seq <= 20; seq++ {
		put(seq)
	}
	if after := size(); after != before {
		t.Fatalf("the segment grew from %d to %d bytes: the records did not go into zeros written ahead", before, after)
	}
	if _, ok, err := b.Load(ctx, []byte(keys[1][19])); err != nil || !ok {
		t.Fatalf("a reread after more records went into the same-sized file: %s found %v (%v)", keys[1][19], ok, err)
	}

	mu.Lock()
	live["a"] = false
	mu.Unlock()
	if _, err := b.refresh(ctx, liveness{"a": false}, nil); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	lf := b.files[filepath.ToSlash(segs[0][len(dir)+1:])]
	if lf == nil {
		t.Fatalf("store b knows no file %s; it knows %v", segs[0], b.files)
	}
	if want := (mapstore.Version{Epoch: 1, Seq: 20}); !lf.final || (lf.maxVer[0] != want || lf.maxVer[1] != want) {
		t.Fatalf("after run a ended, b holds its segment final=%v with highest versions %v, want final with %v", lf.final, lf.maxVer, want)
	}
}
